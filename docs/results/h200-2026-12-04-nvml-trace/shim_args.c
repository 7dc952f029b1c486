#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
typedef int(*F)();
static FILE*o;static void*(*rd)(void*,const char*);
static void*R(void*h,const char*n){if(!rd)rd=dlvsym(RTLD_NEXT,"dlsym","GLIBC_2.2.5");if(!rd)rd=dlvsym(RTLD_NEXT,"dlsym","GLIBC_2.34");return rd(h,n);}
static void D(const char*n,int rc,unsigned in,void*p,int sz){if(!o)o=fopen("/tmp/t.txt","a");fprintf(o,"%s in=0x%x rc=%d:",n,in,rc);for(int i=0;i<sz;i++)fprintf(o,"%s%02x",i%4?"":" ",((unsigned char*)p)[i]);fprintf(o,"\n");fflush(o);}
#define P(N,S) static F r_##N;static int w_##N(void*d,void*p){unsigned in=p?*(unsigned*)p:0;int rc=r_##N(d,p);D(#N,rc,in,p,S);return rc;}
P(nvmlDeviceGetSramEccErrorStatus,112)P(nvmlDeviceGetRepairStatus,16)P(nvmlDeviceGetUnrepairableMemoryFlag_v1,8)P(nvmlDeviceGetRemappedRows_v2,28)P(nvmlDeviceGetC2cModeInfoV,8)P(nvmlDeviceGetCapabilities,12)P(nvmlDeviceGetConfComputeProtectedMemoryUsage,24)P(nvmlDeviceGetFBCStats,12)P(nvmlDeviceGetRowRemapperHistogram,20)
static F r_E;static int w_E(void*d,unsigned*a,unsigned*b,unsigned*c){int rc=r_E(d,a,b,c);unsigned v[3]={*a,*b,*c};D("EncoderStats",rc,0,v,12);return rc;}
static F r_M;static int w_M(void*d,int e,int c,int l,unsigned long long*v){int rc=r_M(d,e,c,l,v);D("MemErr",rc,e<<8|c<<4|l,v,8);return rc;}
static F r_C;static int w_C(void*d,int t,int i,unsigned*v){int rc=r_C(d,t,i,v);D("GetClock",rc,t<<4|i,v,4);return rc;}
static F r_I;static int w_I(void*d,int t,unsigned*v){int rc=r_I(d,t,v);D("ClockInfo",rc,t,v,4);return rc;}
static F r_X;static int w_X(void*d,int t,unsigned*v){int rc=r_X(d,t,v);D("MaxClockInfo",rc,t,v,4);return rc;}
static F r_K;static int w_K(void*d,void*a,void*b){unsigned x=*(unsigned*)a,y=*(unsigned*)b;int rc=r_K(d,a,b);D("DramEncCur",rc,x,a,8);D("DramEncPend",rc,y,b,8);return rc;}
#define Q(N,W) if(!strcmp(n,#N)){r_##W=f;return w_##W;}
#define Z(N) Q(N,N)
void*dlsym(void*h,const char*n){F f=R(h,n);if(!f||!n)return f;
Z(nvmlDeviceGetSramEccErrorStatus)Z(nvmlDeviceGetRepairStatus)Z(nvmlDeviceGetUnrepairableMemoryFlag_v1)Z(nvmlDeviceGetRemappedRows_v2)Z(nvmlDeviceGetC2cModeInfoV)Z(nvmlDeviceGetCapabilities)Z(nvmlDeviceGetConfComputeProtectedMemoryUsage)Z(nvmlDeviceGetFBCStats)Z(nvmlDeviceGetRowRemapperHistogram)
Q(nvmlDeviceGetEncoderStats,E)Q(nvmlDeviceGetMemoryErrorCounter,M)Q(nvmlDeviceGetClock,C)Q(nvmlDeviceGetClockInfo,I)Q(nvmlDeviceGetMaxClockInfo,X)Q(nvmlDeviceGetDramEncryptionMode,K)
return f;}
