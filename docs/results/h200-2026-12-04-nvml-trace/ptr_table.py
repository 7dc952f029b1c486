import struct as S,sys
b=open(sys.argv[1],'rb').read();u=S.unpack_from
po,so=u('<QQ',b,32);pn=u('<H',b,56)[0];sn=u('<H',b,60)[0]
P=[u('<IIQQQQQQ',b,po+56*i) for i in range(pn)]
def o2v(o):
 for t,f,of,va,pa,fs,ms,al in P:
  if t==1 and of<=o<of+fs:return va+o-of
def v2o(v):
 for t,f,of,va,pa,fs,ms,al in P:
  if t==1 and va<=v<va+fs:return of+v-va
def cs(v):
 o=v2o(v) if v else None
 return b[o:b.index(b'\0',o)].decode('latin1') if o is not None else None
R={}
for i in range(sn):
 nm,ty,fl,ad,of,sz,ln,inf,al,es=u('<IIQQQQIIQQ',b,so+64*i)
 if ty==4:
  for j in range(0,sz,24):
   ro,ri,ra=u('<QQq',b,of+j)
   if ri&0xffffffff==8:R[ro]=ra
A={}
for k,v in R.items():A.setdefault(v,[]).append(k)
print('type',u('<H',b,16)[0],'relocs',len(R))
for w in sys.argv[2:]:
 o=b.find(w.encode()+b'\0')
 while o>=0:
  v=o2v(o)
  for ro in A.get(v,[]):print(w,hex(ro),[cs(R.get(ro+8*k)) for k in range(-6,7)])
  p=b.find(S.pack('<Q',v))
  while p>=0:
   print(w,'raw',hex(p),[cs(u('<Q',b,p+8*k)[0]) for k in range(-6,7)]);p=b.find(S.pack('<Q',v),p+1)
  o=b.find(w.encode()+b'\0',o+1)
