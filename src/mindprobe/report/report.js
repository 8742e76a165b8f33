(function(){
  var root=document.getElementById('transcripts'); if(!root) return;
  var ctl=root.querySelectorAll('[data-filter]'), count=document.getElementById('item-count');
  var packed=document.getElementById('mindprobe-transcripts'), store=null, words={};
  // the conversations: one deflated JSON block, {s: text pieces, b: item bodies}
  var ready=new Promise(function(ok){
    var bin=atob((packed?packed.textContent:'').trim()), bytes=new Uint8Array(bin.length);
    for(var i=0;i<bin.length;i++) bytes[i]=bin.charCodeAt(i);
    var flat=new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate'));
    ok(new Response(flat).text());
  }).then(function(t){store=JSON.parse(t);});
  function text(ids){
    return ids?ids.split(',').map(function(k){return store.s[+k];}).join(''):'';
  }
  function render(d){
    var body=d.querySelector('.body'); if(!body||d.dataset.shown) return;
    d.dataset.shown='1';
    ready.then(function(){
      body.innerHTML=store.b[+d.dataset.b];
      body.querySelectorAll('pre[data-s]').forEach(function(p){p.textContent=text(p.dataset.s);});
    }).catch(function(err){
      body.textContent='This browser cannot unpack the transcripts ('+err+'); the full texts '
        +'are in the run\'s records.jsonl.';
    });
  }
  function words_of(d){  // what the text filter searches: the summary and every shown text
    var k=d.dataset.b;
    if(words[k]===undefined){
      if(!store) return d.textContent.toLowerCase();
      var all=[d.querySelector('summary').textContent];
      store.b[+k].replace(/data-s="([^"]*)"/g,function(_,ids){all.push(text(ids));return '';});
      words[k]=all.join('\n').toLowerCase();
    }
    return words[k];
  }
  root.addEventListener('toggle',function(ev){
    var d=ev.target; if(d.open&&d.classList&&d.classList.contains('item')) render(d);
  },true);
  function follow(){
    var d=location.hash&&document.getElementById(location.hash.slice(1));
    if(d&&d.classList.contains('item')){d.hidden=false;d.open=true;render(d);}
  }
  window.addEventListener('hashchange',follow);
  function apply(){
    var f={}; ctl.forEach(function(c){f[c.dataset.filter]=c.value.toLowerCase();});
    var shown=0;
    root.querySelectorAll('.run-items').forEach(function(s){
      var runOk=(!f.run||s.dataset.run===f.run)&&(!f.variant||s.dataset.variant.toLowerCase()===f.variant);
      var any=0;
      s.querySelectorAll('.item').forEach(function(it){
        var ok=runOk&&(!f.group||it.dataset.group.toLowerCase()===f.group)
          &&(!f.outcome||it.dataset.outcome.toLowerCase()===f.outcome)
          &&(!f.text||words_of(it).indexOf(f.text)>=0);
        it.hidden=!ok; if(ok){any++;}
      });
      s.hidden=!any; shown+=any;
    });
    if(count) count.textContent=shown+' item(s)';
  }
  ctl.forEach(function(c){c.addEventListener('input',apply);c.addEventListener('change',apply);});
  apply(); follow();
  ready.then(function(){ if(ctl.length&&root.querySelector('[data-filter="text"]').value) apply(); });
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
