// What the policy pages share: where a link puts a policy, in words, and the box holding
// a rules document (JSON; the page checks only that it parses, the server the rest).
import {h} from './dom.js';
import {field} from './admin.js';

// "the server", "organization a", "project a/p", "user u in organization a", …
export function placeText(l) {
  const where = l.projectName ? `project ${l.orgName}/${l.projectName}` : l.orgName ? `organization ${l.orgName}` : '';
  if (l.userName) return where ? `user ${l.userName} in ${where}` : `user ${l.userName}`;
  return where || 'the server (every process)';
}

// A text box of the rules as JSON, laid out to read; .rules() the parsed object, or throws
// saying the text is not JSON.
export function rulesBox(rules, hint) {
  const text = h('textarea', {rows: 14, class: 'mono', spellcheck: 'false', 'data-test': 'policy-rules'});
  text.value = JSON.stringify(rules === undefined ? {} : rules, null, 2);
  const el = field('Rules (JSON)', text, hint || 'The policy document of docs/security.md "Policies"; the server checks it and names what it refuses.');
  el.rules = () => {
    try {
      return JSON.parse(text.value);
    } catch (e) {
      throw new Error(`The rules are not JSON: ${e.message}`);
    }
  };
  return el;
}

// A select of the other policies as a parent ('' for none).
export function parentSelect(policies, self, current) {
  const sel = h('select', {'data-test': 'policy-parent'},
    h('option', {value: ''}, '(none)'),
    policies.filter((p) => p.name !== self).map((p) => h('option', {value: p.id, selected: p.id === current}, p.name)));
  return field('Parent policy (its rules are the base this one overrides)', sel);
}
