// A message for the next page: an action that leaves its page (a delete) says what it did
// on the page it leads to.  app.js shows it once that page is drawn.
let pending = null;

export function flash(text) {
  pending = text;
}

// The message waiting to be shown, then none.
export function takeFlash() {
  const t = pending;
  pending = null;
  return t;
}
