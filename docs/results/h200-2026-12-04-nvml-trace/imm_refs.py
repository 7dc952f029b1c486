import struct as S,sys,re
b=open(sys.argv[1],'rb').read();u=S.unpack_from
po=u('<Q',b,32)[0];pn=u('<H',b,56)[0]
P=[u('<IIQQQQQQ',b,po+56*i) for i in range(pn)]
def o2v(o):
 for t,f,of,va,pa,fs,ms,al in P:
  if t==1 and of<=o<of+fs:return va+o-of
def v2o(v):
 for t,f,of,va,pa,fs,ms,al in P:
  if t==1 and va<=v<va+fs:return of+v-va
def cs(v):
 o=v2o(v)
 if o is None:return None
 e=b.find(b'\0',o);return b[o:e][:40].decode('latin1') if e-o<200 else None
for w in sys.argv[2:]:
 for m in re.finditer(re.escape(w.encode())+b'\0',b):
  v=o2v(m.start())
  if v is None:continue
  for p in [x.start() for x in re.finditer(re.escape(S.pack('<I',v)),b)][:8]:
   near=[]
   for q in range(p-64,p+64):
    a=u('<I',b,q)[0];s=cs(a) if 0x400000<=a<0x2000000 else None
    if s and len(s)>1:near.append((q-p,s))
   print(w,hex(v),hex(p),near[:12])
