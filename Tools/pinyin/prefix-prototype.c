// Prototype for #42's p99 question: the W8-pinyin contacts (same surname shares and given-name
// characters as coffer-bench, a simpler seeded generator) indexed through Coffer's C tokenizers, then
// 1,000 queries of each kind timed in thread CPU time (so other processes on a busy machine count less),
// p50/p99 and the index's size against the names. Queries are each name's best reading only (not every
// reading FullTextPattern.pinyin ORs), written as before the 0x02 prefix terms (`"\x01zhang li*"`) or,
// with MARK2=1, with a two-letter last prefix as the marked term (`"\x01zhang \x02li"`); MARK2=2 marks
// every prefix (needs a tokenizer indexing them all); MARK2=3 marks only zh, ch and sh (what the
// tokenizer indexes since #42's size work). The first argument is extra FTS4 options.
//
//   gcc -O2 -o /tmp/prefix-prototype Tools/pinyin/prefix-prototype.c Sources/CofferTokenizer/*.c
//       -ISources/CofferTokenizer/include -ISources/CofferTokenizer -I/usr/include/sqlcipher -lsqlcipher -lm
//   (one command line)
//   /tmp/prefix-prototype ""                     # queries as before the 0x02 terms (`li*`)
//   MARK2=3 /tmp/prefix-prototype ""             # marked zh, ch, sh: today's tokenizer
//   MARK2=1 /tmp/prefix-prototype ""             # marked two-letter prefixes (a tokenizer before #42's
//                                                # size work indexed them all)
//   /tmp/prefix-prototype ', prefix="2,3"'       # FTS4 prefix indexes
//   /tmp/prefix-prototype "" "" v                # also print the queries over 1.5 ms
// It writes /tmp/pyproto/t.db (created as needed).

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include "CofferTokenizer.h"
#include "CofferPinyin.h"
#include "pinyin_table.h"
static int expand; static int mark2;
static void fix2(char *q){ if(!mark2) return; char out[512]; char *o=out; for(char *p=q;*p;p++){ if(p[0]=='*'){ /* find start of word */ char *w=o; while(w>out && w[-1]>='a'&&w[-1]<='z') w--; if(o-w>=2 && (mark2>1 || o-w==2) && (mark2!=3 || w[1]=='h')){ if(mark2>1 && !(coffer_pinyin_syllable_kind(w,(int)(o-w))&2)){ continue; } memmove(w+1,w,o-w); *w='\x02'; o++; continue; } if(0){ memmove(w+1,w,2); *w='\x02'; o++; continue; } } *o++=*p; } *o=0; strcpy(q,out); }
/* writes OR of phrases: head + each syllable starting with pre */
static char *orx(char *p, const char *head, const char *pre){ int n=0; int L=strlen(pre); for(int i=0;i<COFFER_PINYIN_SYLLABLE_COUNT;i++){ const char *s=coffer_pinyin_syllable_text+coffer_pinyin_syllable_offsets[i]; if(strncmp(s,pre,L)==0){ p+=sprintf(p,"%s\"\x01%s%s\"", n?" OR ":"", head, s); n++; } } return p; }
static const char *sur = "李王张刘陈杨赵黄周吴徐孙胡朱高林何郭马罗梁宋郑谢韩唐冯于董萧程曹袁邓许傅沈曾彭吕苏卢蒋蔡贾丁魏薛叶阎余潘杜戴夏钟汪田任姜";
static double shares[] = {7.94, 7.41, 7.07, 5.38, 4.53, 3.08, 2.29, 2.23, 2.12, 2.05, 1.67, 1.54, 1.31, 1.26, 1.21, 1.18, 1.17, 1.15, 1.05, 0.86};
static const char *given = "伟芳娜秀英敏静丽强磊军洋勇艳杰娟涛明超兰霞平刚桂华建国红玉梅飞鹏辉宇浩然子涵欣怡梓轩思雨晨博文雅婷佳琪俊豪嘉诗泽一诺睿可馨瑞宏志海波燕萍玲琳晶颖丹阳亮成斌峰东龙春雪云凤长乐";
static const char *nicks[] = {"Sam", "Amy", "Leo", "Coco", "Kevin", "Lily", "Jack", "Momo", "Tony", "Vivian"};
static unsigned long long rs = 0x5EED0042;
static unsigned rnd(unsigned n) { rs = rs * 6364136223846793005ULL + 1442695040888963407ULL; return (unsigned)((rs >> 33) % n); }
static unsigned dec(const char *s, int *w) { const unsigned char *t=(const unsigned char*)s; *w=3; return ((t[0]&0xF)<<12)|((t[1]&0x3F)<<6)|(t[2]&0x3F); }
static double now(void){struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t); return t.tv_sec+t.tv_nsec/1e9;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
#define N 100000
#define Q 1000
char names[N][16]; char syl[N][3][8]; int nsyl[N];
int main(int argc, char **argv) {
  const char *opts = argc > 1 ? argv[1] : ""; expand = argc > 4 && argv[4][0]=='x'; mark2 = getenv("MARK2") ? atoi(getenv("MARK2")) : 0;
  sqlite3 *db; mkdir("/tmp/pyproto", 0755); remove("/tmp/pyproto/t.db"); sqlite3_open("/tmp/pyproto/t.db", &db);
  if (coffer_fts_register(db)) { printf("reg fail\n"); return 1; }
  char sql[512];
  sqlite3_exec(db, "CREATE TABLE contact(id INTEGER PRIMARY KEY, name TEXT, nickname TEXT)", 0,0,0);
  snprintf(sql, sizeof sql, "CREATE VIRTUAL TABLE contact_fts USING fts4(content=\"contact\", name, nickname, tokenize=coffer_pinyin%s)", opts);
  if (sqlite3_exec(db, sql, 0,0,0)) { printf("%s\n", sqlite3_errmsg(db)); return 1; }
  sqlite3_stmt *ins, *idx; sqlite3_prepare_v2(db, "INSERT INTO contact(name,nickname) VALUES(?,?)", -1, &ins, 0);
  sqlite3_prepare_v2(db, "INSERT INTO contact_fts(docid,name,nickname) VALUES(?,?,?)", -1, &idx, 0);
  double total = 0; for (int i=0;i<20;i++) total+=shares[i]; total += 40*0.5;
  int ns = (int)strlen(sur)/3, ng=(int)strlen(given)/3;
  double t0 = now();
  sqlite3_exec(db,"BEGIN",0,0,0);
  for (int i=0;i<N;i++){
    double pick = rnd(1000000)/1e6*total; int s=0;
    for (int k=0;k<ns;k++){ pick -= k<20?shares[k]:0.5; if (pick<=0){s=k;break;} }
    int len = 1 + 1 + rnd(2); char *p = names[i];
    memcpy(p, sur+3*s, 3); p+=3;
    for (int k=1;k<len;k++){ memcpy(p, given+3*rnd(ng), 3); p+=3; } *p=0;
    nsyl[i]=len; for (int k=0;k<len;k++){int w; strcpy(syl[i][k], coffer_pinyin_reading(dec(names[i]+3*k,&w),0));}
    const char *nick = rnd(3)==0 ? nicks[rnd(10)] : "";
    sqlite3_bind_text(ins,1,names[i],-1,0); sqlite3_bind_text(ins,2,nick,-1,0); sqlite3_step(ins); sqlite3_reset(ins);
    sqlite3_bind_int64(idx,1,sqlite3_last_insert_rowid(db)); sqlite3_bind_text(idx,2,names[i],-1,0); sqlite3_bind_text(idx,3,nick,-1,0);
    if (sqlite3_step(idx)!=SQLITE_DONE){printf("%s\n",sqlite3_errmsg(db));return 1;} sqlite3_reset(idx);
    if (i%1000==999){sqlite3_exec(db,"COMMIT; BEGIN",0,0,0);}
  }
  sqlite3_exec(db,"COMMIT",0,0,0);
  sqlite3_exec(db,"INSERT INTO contact_fts(contact_fts) VALUES('optimize')",0,0,0);
  double tidx = now()-t0;
  sqlite3_stmt *st; double sz=0, nb=0;
  sqlite3_prepare_v2(db,"SELECT (SELECT total(length(block)) FROM contact_fts_segments)+(SELECT total(length(root)) FROM contact_fts_segdir), (SELECT total(length(CAST(name AS BLOB))) FROM contact)",-1,&st,0);
  sqlite3_step(st); sz=sqlite3_column_double(st,0); nb=sqlite3_column_double(st,1); sqlite3_finalize(st);
  printf("opts='%s' index %.2fs size %.2f MB names %.2f MB ratio %.2f\n", opts, tidx, sz/1e6, nb/1e6, sz/nb);
  sqlite3_prepare_v2(db,"SELECT contact.id, contact.name, contact.nickname FROM contact_fts JOIN contact ON contact.rowid=contact_fts.docid WHERE contact_fts MATCH ? LIMIT 50",-1,&st,0);
  const char *kinds[]={"full","initials","mixed"};
  FILE *qf = argc > 2 ? fopen(argv[2], "r") : NULL;
  for (int kind=0; kind<3; kind++){
    static double times[Q]; char q[512];
    for (int j=0;j<Q;j++){
      if (qf) { if(!fgets(q,sizeof q,qf)) return 2; q[strcspn(q,"\n")]=0; }
      else {
      int c = rnd(N); char *p=q;
      if (kind==0 && expand){ char head[128]; char *h=head; *h=0; for(int k=0;k<nsyl[c]-1;k++) h+=sprintf(h,"%s ",syl[c][k]); p=orx(p,head,syl[c][nsyl[c]-1]); }
      else if (kind==0){ p+=sprintf(p,"\"\x01"); for(int k=0;k<nsyl[c];k++) p+=sprintf(p,"%s%s",k?" ":"",syl[c][k]); p+=sprintf(p,"*\""); }
      else if (kind==1){ p+=sprintf(p,"\"\x01"); for(int k=0;k<nsyl[c];k++) p+=sprintf(p,"%s%c",k?" ":"",syl[c][k][0]); p+=sprintf(p,"\""); }
      else if (expand) { char head[128]; char *h=head; memcpy(h,names[c],3); h+=3; *h=0; for(int k=1;k<nsyl[c]-1;k++) h+=sprintf(h," %s",syl[c][k]); int L=strlen(syl[c][nsyl[c]-1]); int cut=1+rnd(L); char pre[8]; snprintf(pre,cut+1,"%s",syl[c][nsyl[c]-1]); if (nsyl[c]==1) { p+=sprintf(p,"\"\x01%s\"",head);} else if(cut==1){ p+=sprintf(p,"\"\x01%s %s\"",head,pre);} else { strcat(head," "); p=orx(p,head,pre);} }
      else { p+=sprintf(p,"\"\x01"); memcpy(p,names[c],3); p+=3; for(int k=1;k<nsyl[c];k++){ if(k<nsyl[c]-1) p+=sprintf(p," %s",syl[c][k]); else { int L=strlen(syl[c][k]); int cut=1+rnd(L); p+=sprintf(p," %.*s%s",cut,syl[c][k], cut>1?"*":""); } } p+=sprintf(p,"\""); }
      }
      fix2(q); double s=now(); sqlite3_bind_text(st,1,q,-1,0); int n=0; while(sqlite3_step(st)==SQLITE_ROW){ n++; sqlite3_column_text(st,1);} sqlite3_reset(st); times[j]=now()-s;
      if (argc>3 && (j<3 || times[j]>0.0015)) printf("  %.2f %s -> %d\n", times[j]*1e3, q+2, n);
    }
    qsort(times,Q,sizeof(double),cmp);
    printf("  %-9s p50 %.2f ms p99 %.2f ms max %.2f\n", kinds[kind], times[Q/2]*1e3, times[Q*99/100]*1e3, times[Q-1]*1e3);
  }
  return 0;
}
