(function(){
  var root=document.getElementById('transcripts'); if(!root) return;
  var ctl=root.querySelectorAll('[data-filter]'), count=document.getElementById('item-count');
  function apply(){
    var f={}; ctl.forEach(function(c){f[c.dataset.filter]=c.value.toLowerCase();});
    var shown=0;
    root.querySelectorAll('.run-items').forEach(function(s){
      var runOk=(!f.run||s.dataset.run===f.run)&&(!f.variant||s.dataset.variant.toLowerCase()===f.variant);
      var any=0;
      s.querySelectorAll('.item').forEach(function(it){
        var ok=runOk&&(!f.group||it.dataset.group.toLowerCase()===f.group)
          &&(!f.outcome||it.dataset.outcome.toLowerCase()===f.outcome)
          &&(!f.text||it.textContent.toLowerCase().indexOf(f.text)>=0);
        it.hidden=!ok; if(ok){any++;}
      });
      s.hidden=!any; shown+=any;
    });
    if(count) count.textContent=shown+' item(s)';
  }
  ctl.forEach(function(c){c.addEventListener('input',apply);c.addEventListener('change',apply);});
  apply();
})();

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

(function(){
  var t=document.getElementById('profile-table'); if(!t) return;
  t.querySelectorAll('th.orderable').forEach(function(th){
    th.addEventListener('click',function(){
      var col=+th.dataset.col, desc=th.getAttribute('aria-sort')!=='descending';
      t.querySelectorAll('th.orderable').forEach(function(h){h.removeAttribute('aria-sort');});
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
