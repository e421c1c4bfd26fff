"""The inline CSS and JavaScript of ``audit.html`` (no external assets): layout and print
styles, a sticky table of contents, and the table behaviour — sort by column, filter by text and
by verdict (a checkbox per verdict with its count), open the record a link points at, open every
record before printing."""

__all__ = ["CSS", "JS"]

CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
 margin:0 auto;max-width:1240px;padding:1em 1.2em;color:#1d1d1d;line-height:1.4}
h1{font-size:1.35em;margin:.2em 0 .5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;
 padding-bottom:.15em;margin-top:1.6em}h3{font-size:1em;margin:1.1em 0 .3em}
a{color:#0b57a4}
.banner{border-radius:6px;padding:.7em 1em;color:#fff;font-size:1.15em;font-weight:700}
.banner.fail{background:#b3261e}.banner.pass{background:#1e7d32}
.counts{display:flex;flex-wrap:wrap;gap:.4em;margin:.6em 0;padding:0;list-style:none}
.counts li{border:1px solid #ccc;border-radius:5px;padding:.2em .6em;background:#fafafa}
.counts li.bad{border-color:#b3261e;background:#fdecea;font-weight:700}
.counts b{font-size:1.1em}
nav.toc{font-size:.92em;margin:.4em 0 1em;position:sticky;top:0;background:#fff;z-index:2;
 padding:.35em 0;border-bottom:1px solid #eee}nav.toc a{margin-right:.9em;white-space:nowrap}
table{border-collapse:collapse;margin:.5em 0 1em;font-size:.86em;width:100%;table-layout:fixed}
th,td{border:1px solid #ddd;padding:.2em .45em;text-align:left;vertical-align:top;
 overflow-wrap:anywhere}
th{background:#f1f1f1}th.sortable{cursor:pointer}th.sortable::after{content:" \\2195";color:#888}
tr:nth-child(even) td{background:#fafafa}
table.kv{table-layout:auto}table.kv th{width:13em;font-weight:600;background:#f8f8f8}
dl.kv{display:grid;grid-template-columns:13em 1fr;margin:.5em 0;font-size:.86em;
 border-top:1px solid #ddd}dl.kv dt,dl.kv dd{margin:0;padding:.2em .45em;
 border-bottom:1px solid #ddd;overflow-wrap:anywhere;min-width:0}dl.kv dt{font-weight:600;
 background:#f8f8f8}
code{font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:.9em;background:#f2f2f2;
 padding:0 .2em;border-radius:3px;overflow-wrap:anywhere}
.badge{display:inline-block;color:#fff;background:var(--c,#1f77b4);border-radius:4px;padding:0 .4em;font-size:.85em;
 font-weight:600}
details.record{border:1px solid #e3e3e3;border-left:6px solid var(--c);border-radius:4px;
 padding:.15em .8em;margin:.4em 0}
details.record>summary{cursor:pointer;padding:.2em 0}
details.record[open]{padding-bottom:.7em}
.problem{border-left:6px solid #b3261e;background:#fdf3f2;padding:.35em .8em;margin:.4em 0}
.erratum{border-left:6px solid #8c564b;background:#faf6f4;padding:.35em .8em;margin:.6em 0}
figure{margin:.8em 0}figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:.85em;color:#555}
.note{color:#444;font-size:.9em}
.controls{margin:.3em 0;font-size:.9em}.controls .vbox{margin-right:.8em;white-space:nowrap}.controls input[type=search]{width:22em;max-width:100%}
.ok{color:#1e7d32;font-weight:600}.bad{color:#b3261e;font-weight:700}
@media print{nav.toc,.controls{display:none}body{max-width:none;padding:0}
 details.record{break-inside:avoid}table{font-size:.75em}}
"""

JS = """
(function(){
function val(td){var v=td.getAttribute('data-v');return v===null?td.textContent.trim():v;}
document.querySelectorAll('table.sortable').forEach(function(t){
 t.querySelectorAll('th').forEach(function(th,i){th.classList.add('sortable');
  th.addEventListener('click',function(){var body=t.tBodies[0],rows=[].slice.call(body.rows);
   var dir=th.getAttribute('data-dir')==='asc'?-1:1;th.setAttribute('data-dir',dir>0?'asc':'desc');
   rows.sort(function(a,b){var x=val(a.cells[i]),y=val(b.cells[i]),fx=parseFloat(x),fy=parseFloat(y);
    if(!isNaN(fx)&&!isNaN(fy)&&isFinite(x)&&isFinite(y))return dir*(fx-fy);
    return dir*x.localeCompare(y);});
   rows.forEach(function(r){body.appendChild(r);});});});});
function refilter(id){var t=document.getElementById(id),inp=document.querySelector(
 'input[data-filter="'+id+'"]'),q=inp?inp.value.toLowerCase():'',off={};
 document.querySelectorAll('input[data-verdict-filter="'+id+'"]').forEach(function(b){
  if(!b.checked)off[b.value]=1;});
 [].forEach.call(t.tBodies[0].rows,function(r){var v=r.getAttribute('data-verdict');
  r.style.display=(r.textContent.toLowerCase().indexOf(q)>=0&&!(v&&off[v]))?'':'none';});}
document.querySelectorAll('input[data-filter]').forEach(function(inp){
 inp.addEventListener('input',function(){refilter(inp.getAttribute('data-filter'));});});
document.querySelectorAll('input[data-verdict-filter]').forEach(function(b){
 b.addEventListener('change',function(){refilter(b.getAttribute('data-verdict-filter'));});});
window.addEventListener('beforeprint',function(){
 document.querySelectorAll('details').forEach(function(d){d.setAttribute('open','');});});
function openTarget(){var id=decodeURIComponent(location.hash.slice(1));if(!id)return;
 var el=document.getElementById(id);while(el){if(el.tagName==='DETAILS')el.open=true;
 el=el.parentElement;}}
window.addEventListener('hashchange',openTarget);openTarget();
})();
"""
