// Who is logged in, as the server said on whoami.  The session itself is an HttpOnly
// cookie the page cannot read; the CSRF token comes from whoami's body and lives only in
// memory (a reload asks whoami again).  Listeners (the header's user box) hear every change.
const listeners = [];

export const session = {
  user: null,  // whoami's body: {username, displayName, realm, orgs: [...]}
  csrf: null,
  set(who) {
    this.user = who;
    this.csrf = (who && who.csrfToken) || null;
    listeners.forEach((fn) => fn(this.user));
  },
  clear() {
    this.user = null;
    this.csrf = null;
    listeners.forEach((fn) => fn(null));
  },
  onChange(fn) {
    listeners.push(fn);
  },
};
