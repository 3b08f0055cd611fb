/* Writes the HDF5 seeds of fuzz/corpus/tracks/ (valid tracks, a field-like file, wrong shapes
 * and types, non-increasing t, huge declared sizes with nothing stored). Not part of the build: run
 * by hand in fuzz/corpus/tracks/ when the seeds need remaking (invalid_truncated.h5 = first 2000
 * bytes of valid_one.h5):
 *   gcc ../../make_tracks_seeds.c -I/usr/include/hdf5/serial -L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5 && ./a.out */
#include <hdf5.h>
#include <string.h>
static hid_t fapl(void){ hid_t p=H5Pcreate(H5P_FILE_ACCESS); H5Pset_libver_bounds(p,H5F_LIBVER_LATEST,H5F_LIBVER_LATEST); return p;}
static void d1(hid_t g,const char*n,const double*v,hsize_t k,hid_t type){hid_t s=H5Screate_simple(1,&k,0);hid_t d=H5Dcreate2(g,n,type,s,H5P_DEFAULT,H5P_DEFAULT,H5P_DEFAULT);if(k&&v)H5Dwrite(d,H5T_NATIVE_DOUBLE,H5S_ALL,H5S_ALL,H5P_DEFAULT,v);H5Dclose(d);H5Sclose(s);}
static void track(hid_t root,const char*name,int n,double t0,int bad){hid_t g=H5Gcreate2(root,name,H5P_DEFAULT,H5P_DEFAULT,H5P_DEFAULT);double t[8],z[8];for(int i=0;i<n;i++){t[i]=t0+i*1e-16;z[i]=i*1e-8;}if(bad)t[2]=t[1];
const char*c[7]={"t","x","y","z","ux","uy","uz"};for(int k=0;k<7;k++)d1(g,c[k],k==0?t:z,n,H5T_IEEE_F64LE);H5Gclose(g);}
int main(){
 hid_t f,r,g,s,d; double v[12]; for(int i=0;i<12;i++)v[i]=i;
 f=H5Fcreate("valid_one.h5",H5F_ACC_TRUNC,H5P_DEFAULT,fapl()); r=H5Gcreate2(f,"tracks",H5P_DEFAULT,H5P_DEFAULT,H5P_DEFAULT); track(r,"000000",4,0,0); H5Gclose(r); H5Fclose(f);
 f=H5Fcreate("valid_two_and_field.h5",H5F_ACC_TRUNC,H5P_DEFAULT,fapl()); r=H5Gcreate2(f,"tracks",H5P_DEFAULT,H5P_DEFAULT,H5P_DEFAULT); track(r,"000000",4,0,0); track(r,"000001",5,-1e-15,0); H5Gclose(r);
 g=H5Gcreate2(f,"E",H5P_DEFAULT,H5P_DEFAULT,H5P_DEFAULT); {hsize_t dims[3]={2,2,3}; s=H5Screate_simple(3,dims,0); d=H5Dcreate2(g,"x",H5T_IEEE_F64LE,s,H5P_DEFAULT,H5P_DEFAULT,H5P_DEFAULT); H5Dwrite(d,H5T_NATIVE_DOUBLE,H5S_ALL,H5S_ALL,H5P_DEFAULT,v); H5Dclose(d); H5Sclose(s);} H5Gclose(g);
 g=H5Gcreate2(f,"axes",H5P_DEFAULT,H5P_DEFAULT,H5P_DEFAULT); d1(g,"t",v,3,H5T_IEEE_F64LE); H5Gclose(g); H5Fclose(f);
 f=H5Fcreate("invalid_nonincreasing.h5",H5F_ACC_TRUNC,H5P_DEFAULT,fapl()); r=H5Gcreate2(f,"tracks",H5P_DEFAULT,H5P_DEFAULT,H5P_DEFAULT); track(r,"000000",4,0,1); H5Gclose(r); H5Fclose(f);
 /* wrong shapes and types: t integer, a 2-D x, a group with a bad name */
 f=H5Fcreate("invalid_shapes.h5",H5F_ACC_TRUNC,H5P_DEFAULT,fapl()); r=H5Gcreate2(f,"tracks",H5P_DEFAULT,H5P_DEFAULT,H5P_DEFAULT);
 g=H5Gcreate2(r,"000000",H5P_DEFAULT,H5P_DEFAULT,H5P_DEFAULT); d1(g,"t",v,4,H5T_STD_I32LE); {hsize_t dims[2]={2,2}; s=H5Screate_simple(2,dims,0); d=H5Dcreate2(g,"x",H5T_IEEE_F64LE,s,H5P_DEFAULT,H5P_DEFAULT,H5P_DEFAULT); H5Dclose(d); H5Sclose(s);} H5Gclose(g);
 g=H5Gcreate2(r,"abc",H5P_DEFAULT,H5P_DEFAULT,H5P_DEFAULT); H5Gclose(g); H5Gclose(r);
 g=H5Gcreate2(f,"E",H5P_DEFAULT,H5P_DEFAULT,H5P_DEFAULT); d1(g,"x",v,5,H5T_IEEE_F32LE); H5Gclose(g); H5Fclose(f);
 /* huge declared sizes, no data written (chunked, unallocated): sizes must not be taken on trust */
 f=H5Fcreate("invalid_huge_unallocated.h5",H5F_ACC_TRUNC,H5P_DEFAULT,fapl()); r=H5Gcreate2(f,"tracks",H5P_DEFAULT,H5P_DEFAULT,H5P_DEFAULT);
 g=H5Gcreate2(r,"000000",H5P_DEFAULT,H5P_DEFAULT,H5P_DEFAULT);
 {hsize_t n=1ull<<34, ch=1024; hid_t dcpl=H5Pcreate(H5P_DATASET_CREATE); H5Pset_chunk(dcpl,1,&ch); s=H5Screate_simple(1,&n,0); d=H5Dcreate2(g,"t",H5T_IEEE_F64LE,s,H5P_DEFAULT,dcpl,H5P_DEFAULT); H5Dclose(d); H5Sclose(s);
  hsize_t dims[3]={1u<<20,1u<<20,1u<<20}, c3[3]={1,1,64}; H5Pset_chunk(dcpl,3,c3); hid_t e=H5Gcreate2(f,"E",H5P_DEFAULT,H5P_DEFAULT,H5P_DEFAULT); s=H5Screate_simple(3,dims,0); d=H5Dcreate2(e,"x",H5T_IEEE_F64LE,s,H5P_DEFAULT,dcpl,H5P_DEFAULT); H5Dclose(d); H5Sclose(s); H5Gclose(e);}
 H5Gclose(g); H5Gclose(r); H5Fclose(f);
 return 0;}
