// Injected into a copy of the report by test_report_transcripts.py, after `window.PROBE =
// {open: [element ids], search: [texts]}`: opens those items (one through a link, as a reader
// follows a comparison), waits until the page's script has rendered them, types each of `search`
// into the text filter, and writes what it saw into pre#transcript-report as JSON.
window.addEventListener('load', function(){
  var probe = window.PROBE, t0 = performance.now(), items = {};
  var first = document.getElementById(probe.open[0]);
  location.hash = '#' + probe.open[0];  // followed like a link
  probe.open.slice(1).forEach(function(id){ document.getElementById(id).open = true; });
  function done(){
    return probe.open.every(function(id){
      var b = document.getElementById(id).querySelector('.body');
      return b && b.children.length > 0;
    });
  }
  (function wait(n){
    if (!done() && n < 1000) { setTimeout(function(){ wait(n + 1); }, 10); return; }
    probe.open.forEach(function(id){
      var d = document.getElementById(id), b = d.querySelector('.body');
      items[id] = {open: d.open, text: b.textContent,
                   live: b.querySelectorAll('script,img,svg,iframe,a').length};
    });
    var box = document.querySelector('#transcripts [data-filter="text"]'), counts = {};
    probe.search.forEach(function(s){
      box.value = s; box.dispatchEvent(new Event('input'));
      counts[s] = document.getElementById('item-count').textContent;
    });
    var out = {items: items, rendered_ms: performance.now() - t0, first_open: first.open,
               counts: counts,
               paint: performance.getEntriesByType('paint').map(function(p){ return p.name; })};
    var pre = document.createElement('pre'); pre.id = 'transcript-report';
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  })(0);
});
