// A long table drawn a window at a time: only the rows near the viewport are in the DOM
// (about 60), two spacer bodies above and below stand for the others at the measured row
// height, so the page is as tall as the whole list and every row is reached by scrolling.
// Scrolling and resizing move the window.  Tab and Shift+Tab walk the whole list: the
// window reaches OVERSCAN rows past the viewport, and the browser scrolls the focused link
// into view, which moves the window on.  Rows stay in place while the window moves (a row
// leaving the window is removed, one entering is inserted), so the focus and any state of
// a row survive a move.
import {h} from './dom.js';

const OVERSCAN = 20; // rows kept beyond each edge of the viewport
const MIN_ROWS = 60; // rows drawn at the least (a short viewport still gets a screenful ahead)
const GUESS_PX = 33; // a row's height until one is measured

function spacer(cols) {
  const td = h('td', {colspan: cols});
  return {body: h('tbody', {class: 'spacer', 'aria-hidden': 'true'}, h('tr', {}, td)), td, px: -1};
}

function setHeight(s, px) {
  if (s.px === px) return;
  s.px = px;
  s.td.style.height = px + 'px';
  s.body.hidden = px === 0;
}

// rowWindow(table, tbody, cols, rowAt): tbody (a child of table, after its thead) holds
// the window; cols is the number of columns; rowAt(i) returns the <tr> of row i (the same
// element for the same row, built on first use).  Returns {set(n), stop()}: set(n) says the list now has n rows
// and redraws (call it after rows changed); stop() removes the listeners.
export function rowWindow(table, tbody, cols, rowAt) {
  const above = spacer(cols), below = spacer(cols);
  table.insertBefore(above.body, tbody);
  tbody.after(below.body);
  let n = 0, rowPx = 0, frame = 0;

  // The rows [start, end) around the viewport, from where row 0 would be: under the
  // table's head (the spacer above is hidden when empty: it has no place then).
  function range() {
    const px = rowPx || GUESS_PX;
    const top = table.tHead.getBoundingClientRect().bottom;
    const first = Math.max(0, Math.floor(-top / px));
    const want = Math.max(MIN_ROWS, Math.ceil(window.innerHeight / px) + 2 * OVERSCAN);
    const start = Math.min(Math.max(0, first - OVERSCAN), Math.max(0, n - want));
    return [start, Math.min(n, start + want)];
  }

  // Makes tbody hold exactly rows: those to go are removed, the others stay where they
  // are (a focused link keeps its focus), the new ones are inserted in order.
  function place(rows) {
    const keep = new Set(rows);
    for (const tr of [...tbody.children]) if (!keep.has(tr)) tr.remove();
    let at = tbody.firstChild;
    for (const tr of rows) {
      if (tr === at) at = at.nextSibling;
      else tbody.insertBefore(tr, at);
    }
  }

  function draw() {
    frame = 0;
    const [start, end] = range();
    const rows = [];
    for (let i = start; i < end; i++) {
      const tr = rowAt(i);
      const idx = String(i + 2); // the header row is 1
      if (tr.getAttribute('aria-rowindex') !== idx) tr.setAttribute('aria-rowindex', idx);
      rows.push(tr);
    }
    place(rows);
    if (!rowPx && rows.length) rowPx = tbody.getBoundingClientRect().height / rows.length || 0;
    const px = rowPx || GUESS_PX;
    setHeight(above, Math.round(start * px));
    setHeight(below, Math.round((n - end) * px));
  }

  function later() {
    if (!frame) frame = requestAnimationFrame(draw);
  }

  function resized() {
    rowPx = 0; // rows wrap differently at another width
    later();
  }

  window.addEventListener('scroll', later, {passive: true});
  window.addEventListener('resize', resized);
  return {
    set(count) {
      n = count;
      table.setAttribute('aria-rowcount', String(n + 1));
      draw();
    },
    stop() {
      window.removeEventListener('scroll', later);
      window.removeEventListener('resize', resized);
      if (frame) cancelAnimationFrame(frame);
      frame = 0;
    },
  };
}
