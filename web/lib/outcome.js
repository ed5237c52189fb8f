// What a failed action means to the user: a sentence for each kind of refusal instead of
// the server's wording (which names fields and codes); the server's own message stays in
// the element's title for whoever needs it.
import {ApiError} from './api.js';

// what: the action in the infinitive ("stop this process").
export function explain(what, e) {
  if (!(e instanceof ApiError)) return `The server could not be reached, so nothing was done. Check the connection and try again to ${what}.`;
  switch (e.status) {
  case 403: return `You are not allowed to ${what}: only its initiator, an owner of its project or an administrator may.`;
  case 404: return `Could not ${what}: it no longer exists.`;
  case 409: return `Could not ${what}: it changed meanwhile. Its current state is shown.`;
  case 400: case 422: return `Could not ${what}: ${e.message}`;
  default: return e.status >= 500 ? `The server failed to ${what}. Try again in a moment.` : `Could not ${what}: ${e.message}`;
  }
}
