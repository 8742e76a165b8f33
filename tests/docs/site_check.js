// Injected into each page of the built manual by test_site_browser.py. After the page and
// Material's scripts have run it measures the layout and writes what it found into
// pre#site-report as JSON: the page's scroll width against the viewport, code blocks that
// stick out of the viewport or overflow without scrolling inside their box, and images that
// did not load. With ?search=WORD it types WORD into the search box and reports the results.
(function(){
  function report(extra){
    var doc = document.documentElement, problems = [];
    document.querySelectorAll('pre').forEach(function(pre){
      var r = pre.getBoundingClientRect(), style = getComputedStyle(pre);
      var code = pre.querySelector('code') || pre, cs = getComputedStyle(code);
      if (r.width > 0 && (r.left < -1 || r.right > window.innerWidth + 1))
        problems.push({kind: 'code block outside the viewport', text: pre.textContent.slice(0, 60), right: r.right});
      var scrolls = /(auto|scroll)/.test(style.overflowX) || /(auto|scroll)/.test(cs.overflowX);
      if (code.scrollWidth > code.clientWidth + 1 && !scrolls)
        problems.push({kind: 'code overflows without scrolling', text: pre.textContent.slice(0, 60)});
    });
    document.querySelectorAll('img').forEach(function(img){
      if (!img.complete || img.naturalWidth === 0) problems.push({kind: 'image not loaded', src: img.src});
    });
    var out = {scrollWidth: doc.scrollWidth, innerWidth: window.innerWidth, problems: problems,
               codeBlocks: document.querySelectorAll('pre').length};
    for (var k in extra) out[k] = extra[k];
    var pre = document.createElement('pre'); pre.id = 'site-report'; pre.textContent = JSON.stringify(out);
    pre.style.display = 'none';
    document.body.appendChild(pre);
    fetch('/__report', {method: 'POST', body: pre.textContent});
  }
  window.addEventListener('load', function(){
    var word = new URLSearchParams(location.search).get('search');
    if (!word) { setTimeout(function(){ report({}); }, 300); return; }
    var input = document.querySelector('input.md-search__input'), tries = 0;
    function type(){
      input.focus(); input.value = word;
      ['input', 'keyup', 'change'].forEach(function(e){ input.dispatchEvent(new Event(e, {bubbles: true})); });
    }
    (function poll(){
      var items = document.querySelectorAll('.md-search-result__item');
      if (items.length || tries > 80) {
        report({search: word, results: items.length,
                first: items.length ? items[0].textContent.trim().slice(0, 80) : ''});
        return;
      }
      if (tries % 10 === 0) type();
      tries++; setTimeout(poll, 100);
    })();
  });
})();
