// Injected into a copy of the report by test_report_browser.py: opens every folded block, then
// measures the rendered page and writes what it found into pre#layout-report as JSON:
// SVG text outside its chart, unrotated SVG texts overlapping, tables wider than their box,
// column heads broken inside a word (a line that starts after a letter, not after a space or
// one of _ / - . where the head offers a break), and the page's scroll width against the viewport.
window.addEventListener('load', function(){
  document.querySelectorAll('details').forEach(function(d){ d.open = true; });
  var problems = [];
  function box(el){ var r = el.getBoundingClientRect(); return {l:r.left, t:r.top, r:r.right, b:r.bottom}; }
  function name(el){ return (el.textContent || '').slice(0, 60); }
  document.querySelectorAll('svg.chart').forEach(function(svg, i){
    var s = box(svg), label = svg.getAttribute('aria-label') || ('chart ' + i);
    var texts = Array.prototype.slice.call(svg.querySelectorAll('text'));
    var flat = [];
    texts.forEach(function(t){
      var b = box(t);
      if (b.r - b.l < 0.5) return;
      if (b.l < s.l - 1 || b.r > s.r + 1 || b.t < s.t - 1 || b.b > s.b + 1)
        problems.push({kind: 'clipped', chart: label, text: name(t), box: b, svg: s});
      if (!(t.getAttribute('transform') || '').includes('rotate')) flat.push([t, b]);
    });
    for (var a = 0; a < flat.length; a++) for (var c = a + 1; c < flat.length; c++) {
      var x = flat[a][1], y = flat[c][1];
      var w = Math.min(x.r, y.r) - Math.max(x.l, y.l), h = Math.min(x.b, y.b) - Math.max(x.t, y.t);
      if (w > 1 && h > 1) problems.push({kind: 'overlap', chart: label, text: name(flat[a][0]) + ' | ' + name(flat[c][0])});
    }
  });
  document.querySelectorAll('.tablewrap').forEach(function(w){
    if (w.scrollWidth > w.clientWidth + 1) problems.push({kind: 'table scrolls', text: name(w).slice(0, 60), scroll: w.scrollWidth, client: w.clientWidth});
  });
  document.querySelectorAll('thead th').forEach(function(th){
    var walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT), node, prev, range = document.createRange();
    while ((node = walker.nextNode())) {
      prev = null;  // a text node ends at an element (a block, a <wbr>): a line may start there
      for (var i = 0; i < node.data.length; i++) {
        range.setStart(node, i); range.setEnd(node, i + 1);
        var rects = range.getClientRects();
        if (!rects.length) continue;
        var here = {top: rects[0].top, ch: node.data[i]};
        if (prev && here.top > prev.top + 2 && /[A-Za-z0-9]/.test(prev.ch) && /[A-Za-z0-9]/.test(here.ch))
          problems.push({kind: 'head broken inside a word', text: name(th).slice(0, 60), at: prev.ch + '|' + here.ch});
        prev = here;
      }
    }
  });
  var doc = document.documentElement;
  var out = {problems: problems, scrollWidth: doc.scrollWidth, innerWidth: window.innerWidth,
             charts: document.querySelectorAll('svg.chart').length,
             texts: document.querySelectorAll('svg.chart text').length};
  var pre = document.createElement('pre'); pre.id = 'layout-report'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
  if (window.parent !== window) window.parent.postMessage(pre.textContent, '*');  // a phone frame
});
