/* LD_PRELOAD shim for the oclgrind kernel check (oclgrind_kernels.sh): clEnqueueFillBuffer done as a
 * blocking clEnqueueWriteBuffer of the repeated pattern. oclgrind 21.10's uninitialised-value
 * checker marks only the first pattern of a fill as written (its shadow memory is re-allocated per
 * pattern-sized store in Queue::executeFillBuffer), so every read of a cube that edm zeroed with a
 * fill was reported as uninitialised; a write of the same bytes is tracked correctly. The kernels
 * see the same zeros either way. Only the checker loads this; edm itself is unchanged. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdlib.h>
#include <string.h>

CL_API_ENTRY cl_int CL_API_CALL clEnqueueFillBuffer(cl_command_queue queue, cl_mem buffer, const void* pattern,
                                                    size_t pattern_size, size_t offset, size_t size,
                                                    cl_uint num_events, const cl_event* wait_list, cl_event* event) {
  if (!pattern || pattern_size == 0 || size % pattern_size != 0) return CL_INVALID_VALUE;
  unsigned char* host = malloc(size ? size : 1);
  if (!host) return CL_OUT_OF_HOST_MEMORY;
  for (size_t i = 0; i < size; i += pattern_size) memcpy(host + i, pattern, pattern_size);
  const cl_int status = clEnqueueWriteBuffer(queue, buffer, CL_TRUE, offset, size, host, num_events, wait_list, event);
  free(host);
  return status;
}
