// Helpers shared by the edm kernels (FP64 everywhere).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
