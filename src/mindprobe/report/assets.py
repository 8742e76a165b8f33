"""The page's inline style and scripts: screen and print CSS (one benchmark per printed page),
folded blocks opened for printing, and the sortable profile table."""

CSS = """
:root{--fg:#1d1d1f;--muted:#6b6b70;--line:#dcdce0;--bg:#fff;--soft:#f5f5f7;--accent:#0b5cad;
--ok:#1a7f37;--bad:#b42318;--warn:#9a6700}
*{box-sizing:border-box}
body{margin:0;color:var(--fg);background:var(--bg);font:15px/1.5 system-ui,-apple-system,
"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;font-variant-numeric:tabular-nums}
header.top{background:#14213d;color:#fff;padding:22px 0 14px}
header.top h1{margin:0;font-size:26px;font-weight:650;letter-spacing:-.01em}
header.top p{margin:4px 0 0;color:#c9d2e3;font-size:14px}
.wrap{max-width:1180px;margin:0 auto;padding:0 24px}
nav.toc{position:sticky;top:0;z-index:5;background:rgba(255,255,255,.96);
border-bottom:1px solid var(--line);font-size:14px}
nav.toc a{display:inline-block;padding:9px 12px 9px 0;margin-right:8px;color:var(--accent);
text-decoration:none}
nav.toc a:hover{text-decoration:underline}
section.block{padding:8px 0 18px;border-bottom:1px solid var(--line)}
h2{font-size:21px;margin:26px 0 6px;letter-spacing:-.01em}
h3{font-size:16.5px;margin:22px 0 6px}
h2 small,h3 small{font-weight:400;color:var(--muted);font-size:14px}
a{color:var(--accent)}
.muted{color:var(--muted)}
p.lead{color:var(--muted);margin:2px 0 12px}
table{border-collapse:collapse;font-size:13.5px}
.tablewrap{overflow-x:auto;margin:10px 0 14px}
table.data,table.profile{min-width:40%}
table.data caption,table.profile caption{caption-side:top;text-align:left;font-weight:600;
padding:0 0 6px;font-size:13.5px}
th,td{padding:5px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top;
overflow-wrap:break-word}
thead th{overflow-wrap:anywhere}
thead th{border-bottom:2px solid #b8b8be;font-weight:600;background:var(--soft)}
tbody tr:nth-child(even) td{background:#fafafb}
.num{text-align:right}td.num{overflow-wrap:normal}
table.profile td,table.profile th{padding:7px 12px}
table.profile td.missing{color:#9a9aa0;text-align:center}
table.profile td a{color:inherit;text-decoration:none}
table.profile .n{display:block;font-size:11.5px;color:var(--muted)}
table.profile{width:100%}
table.profile .metric,table.profile .base{display:block;font-weight:400;font-size:11.5px;
color:var(--muted)}
table.profile .base{color:#b00020}
table.profile .setting{display:block;font-size:11px;color:var(--muted)}
table.profile .setting.off{color:var(--warn)}
table.profile th.sortable{cursor:pointer}
table.profile th.sortable::after{content:" ⇅";color:#aaa;font-weight:400}
table.profile th[aria-sort=ascending]::after{content:" ▲";color:#333}
table.profile th[aria-sort=descending]::after{content:" ▼";color:#333}
table.profile tr.pub th,table.profile tr.pub td{background:#f7f9fc;font-style:italic}
.badge.pub{background:#e8eefc;color:#1d3f8a;font-style:normal}
dl.defs{font-size:13px;margin:8px 0}
dl.defs dt{font-weight:600;margin-top:4px}dl.defs dd{margin:0 0 2px 16px}
ul.small{font-size:12.5px;margin:2px 0 8px}
.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:6px}
table.kv th{width:210px;font-weight:600;background:none;color:#333;white-space:nowrap}
table.kv td{word-break:break-word;font-size:13px}
dl.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(250px,1fr));gap:2px 18px;
font-size:12.5px;margin:8px 12px}
dl.facts div{display:flex;gap:8px;border-bottom:1px dotted var(--line);padding:2px 0}
dl.facts dt{font-weight:600;color:#444;min-width:90px}
dl.facts dd{margin:0;word-break:break-word}
p.small{font-size:12.5px;margin:4px 0}
.badge{display:inline-block;font-size:11.5px;font-weight:600;padding:1px 7px;border-radius:10px;
margin-left:6px;background:#eee;color:#333;vertical-align:1px}
.badge.ok{background:#dafbe1;color:var(--ok)}.badge.bad{background:#ffebe9;color:var(--bad)}
.badge.warn{background:#fff8c5;color:var(--warn)}.badge.err{background:#ffebe9;color:var(--bad)}
.headline{font-size:15px;margin:4px 0 8px}
.headline b{font-size:17px}
.note{font-size:13.5px;color:#333;margin:4px 0}
.warning{font-size:13.5px;color:var(--warn);background:#fffbe6;border-left:3px solid #e0b400;
padding:5px 10px;margin:6px 0}
.partial{color:var(--warn);font-weight:600}
.error{color:var(--bad);background:#fff1f0;border-left:3px solid var(--bad);padding:6px 10px}
.figs{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:14px 22px;
margin:10px 0}
.figs.small{grid-template-columns:repeat(auto-fill,minmax(460px,1fr))}
figure{margin:0;break-inside:avoid}
svg.chart{max-width:100%;height:auto;display:block;background:#fff}
.run{margin:8px 0 14px;padding:2px 0 6px 14px;border-left:3px solid var(--line)}
details.run>summary{list-style:none}
details.run>summary::-webkit-details-marker{display:none}
details.run>summary h3{display:inline-block;margin:10px 0 4px}
details.run>summary h3::before{content:"▸ ";color:var(--muted)}
details.run[open]>summary h3::before{content:"▾ "}
.hl{font-weight:500;color:#333;margin-left:6px}
details.cmp{margin:6px 0}
details.cmp>summary{font-size:14px;padding:3px 0}
details>summary{cursor:pointer}
.filters{display:flex;flex-wrap:wrap;gap:10px 16px;align-items:center;padding:10px 12px;
background:var(--soft);border:1px solid var(--line);border-radius:8px;margin:10px 0;
font-size:13.5px;position:sticky;top:38px;z-index:4}
.filters select,.filters input{font:inherit;padding:3px 6px;border:1px solid #bbb;
border-radius:5px;background:#fff}
.filters .count{margin-left:auto;color:var(--muted)}
details.item{border:1px solid var(--line);border-radius:6px;margin:5px 0;background:#fff}
details.item>summary{padding:6px 10px;font-size:13.5px}
details.item[open]>summary{border-bottom:1px solid var(--line);background:var(--soft)}
details.item .convo,details.item>details{margin:8px 12px}
.iid{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
.grp{margin-left:10px;color:var(--muted)}
.ans{margin-left:10px;font-size:12.5px;color:#444}

.msg{margin:6px 0;max-width:900px;border-radius:8px;padding:6px 10px;border:1px solid var(--line)}
.msg.user{background:#f3f6fb}.msg.assistant{background:#f4fbf5;margin-left:28px}
.msg.judge{background:#fbf7f0;margin-left:28px}.msg.error{background:#fff1f0}
.msg.system{background:#f6f3fb}
.req{border-left:3px solid #c9d2e3;padding-left:8px;margin:6px 0}
.req>.who{font-size:11.5px;font-weight:600;color:var(--muted)}
.badge.neutral{background:#eee}
.msg .who{font-size:11.5px;font-weight:600;color:var(--muted);text-transform:uppercase;
letter-spacing:.03em}
.msg .meta{font-size:12px;color:var(--muted)}
pre{white-space:pre-wrap;word-break:break-word;margin:2px 0;font:12.5px/1.45 ui-monospace,
SFMono-Regular,Menlo,Consolas,monospace}
footer{padding:18px 0 30px;color:var(--muted);font-size:13px}
@media print{
 @page{size:A4;margin:14mm 12mm}
 body{font-size:10.5pt}
 header.top{background:none;color:#000;padding:0 0 6px;border-bottom:2px solid #000}
 header.top p{color:#333}
 nav.toc,.filters{display:none}
 .wrap{max-width:none;padding:0}
 .figs{display:block}
 .figs.small{display:grid;grid-template-columns:1fr 1fr;gap:4px 12px}
 figure{margin:0 0 8px;page-break-inside:avoid}
 svg.chart{max-width:100%}
 .tablewrap{overflow:visible}
 table{page-break-inside:auto;font-size:8.5pt}th,td{padding:2px 6px}
 .num{white-space:normal}
 tr,figure,.cmp,.msg{page-break-inside:avoid}
 h2,h3{page-break-after:avoid}
 section.block{border:none;break-before:page}
 section#profile{break-before:auto}
 table.profile th.sortable::after{content:none}
 section#transcripts details.item:not([open]){display:none}
 a{color:inherit;text-decoration:none}
 tbody tr:nth-child(even) td{background:none}
}
"""

PRINT_JS = """
(function(){
  var opened=[];
  window.addEventListener('beforeprint',function(){
    document.querySelectorAll('details:not(.item):not([open])').forEach(function(d){
      d.open=true;opened.push(d);});
  });
  window.addEventListener('afterprint',function(){
    opened.forEach(function(d){d.open=false;});opened=[];
  });
})();
"""


SORT_JS = """
(function(){
  var t=document.getElementById('profile-table'); if(!t) return;
  t.querySelectorAll('th.sortable').forEach(function(th){
    th.addEventListener('click',function(){
      var col=+th.dataset.col, desc=th.getAttribute('aria-sort')!=='descending';
      t.querySelectorAll('th.sortable').forEach(function(h){h.removeAttribute('aria-sort');});
      th.setAttribute('aria-sort',desc?'descending':'ascending');
      var body=t.tBodies[0], rows=Array.prototype.slice.call(body.rows);
      rows.sort(function(a,b){
        var x=a.cells[col].dataset.v||'', y=b.cells[col].dataset.v||'';
        if(x===''&&y==='') return 0; if(x==='') return 1; if(y==='') return -1;
        var nx=parseFloat(x), ny=parseFloat(y);
        var c=(isNaN(nx)||isNaN(ny))?x.localeCompare(y):nx-ny;
        return desc?-c:c;
      });
      rows.forEach(function(r){body.appendChild(r);});
    });
  });
})();
"""
