// The team access rules of a project or a secret (GET …/access, POST …/access/bulk): rows
// of team and level; Save replaces them all.  One editor for every kind of resource, as the
// server has one implementation (api/access_rules.c).
import {api} from './api.js';
import {h} from './dom.js';
import {busy, errorBox, field, select, uid} from './admin.js';

const LEVELS = ['READER', 'WRITER', 'OWNER'];

// Whether the level the server says the user holds (a record's yourAccess) is at least
// need.  A record without it (an older server) allows everything: the server still decides.
export function allows(have, need) {
  return !have || LEVELS.indexOf(have) >= LEVELS.indexOf(need);
}

// Said instead of a form the user may not use: what it needs and what they hold.
export function notAllowed(test, what, need, have) {
  return h('p', {class: 'hint', 'data-test': test},
    `${what} needs the ${need.toLowerCase()} level; you are a ${(have || 'reader').toLowerCase()} here.`);
}

// The rules as a plain list, for those who may not change them.
export function rulesList(rules) {
  if (!rules.length) return h('p', {class: 'hint', 'data-test': 'rules-none'}, 'No team rules.');
  return h('ul', {class: 'plain', 'data-test': 'rules-list'}, rules.map((r) => h('li', {}, `${r.teamName}: ${r.level}`)));
}

// The team rules as rows of team and level; Save replaces them all (…/access/bulk).
export function rulesForm(apiBase, teams, rules) {
  const rows = h('div', {'data-test': 'rules-rows'});
  const none = h('p', {class: 'hint', 'data-test': 'rules-none'}, 'No team rules yet.');
  const sayNone = () => (none.hidden = rows.children.length > 0);
  const teamOptions = [['', '(choose a team)'], ...teams.map((t) => t.name)];
  const addRow = (team, level) => {
    const n = uid('rule');
    const teamSel = select({id: n + '-team', 'data-test': 'rule-team'}, teamOptions, team || '');
    const levelSel = select({id: n + '-level', 'data-test': 'rule-level'}, LEVELS, level || 'READER');
    const remove = h('button', {type: 'button', class: 'secondary', 'data-test': 'rule-remove', 'aria-label': 'Remove this rule'}, 'Remove');
    const row = h('div', {class: 'row rule-row', 'data-test': 'rule-row'}, field('Team', teamSel), field('Level', levelSel), remove);
    remove.addEventListener('click', () => {
      row.remove();
      sayNone();
      add.focus();
    });
    rows.append(row);
    sayNone();
    return teamSel;
  };
  const add = h('button', {type: 'button', class: 'secondary', 'data-test': 'rule-add'}, 'Add rule');
  add.addEventListener('click', () => addRow().focus());
  for (const r of rules) addRow(r.teamName, r.level);
  sayNone();

  const box = errorBox('rules-result');
  const submit = h('button', {type: 'submit', 'data-test': 'rules-save'}, 'Save rules');
  const titleId = uid('rules');
  const form = h('form', {'aria-labelledby': titleId, 'data-test': 'rules-form'},
    h('h2', {id: titleId}, 'Access rules'),
    h('p', {class: 'hint'}, 'Reader: see it and use it. Writer: also change it. Owner: also delete it and change these rules.'),
    teams.length ? null : h('p', {class: 'hint'}, 'This organization has no team.'),
    none, rows, h('p', {}, add), box.el, h('p', {}, submit));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, box, async () => {
      const body = [];
      for (const row of rows.querySelectorAll('[data-test="rule-row"]')) {
        const teamName = row.querySelector('[data-test="rule-team"]').value;
        if (!teamName) throw new Error('Choose a team for every rule (or remove the rule).');
        body.push({teamName, level: row.querySelector('[data-test="rule-level"]').value});
      }
      await api('POST', apiBase + '/access/bulk', {json: body});
      box.ok(body.length ? `Saved ${body.length} rule${body.length > 1 ? 's' : ''}.` : 'Saved: no rules.');
    });
  });
  return h('div', {class: 'panel'}, form);
}
