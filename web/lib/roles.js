// What the roles pages share: the permissions a role may hold (the server's list,
// docs/api.md "Roles", auth/roles.h) with what each allows, and the boxes that pick them.
import {h} from './dom.js';
import {uid} from './admin.js';

export const PERMISSIONS = [
  ['createOrg', 'Create organizations'],
  ['updateOrg', 'Update any organization'],
  ['getProcessQueueAllOrgs', 'See the process queue of every organization'],
  ['apiKeySpecifyValue', 'Choose the value of a new API key'],
  ['agentWebsocket', 'Agent websocket (stored; applies to nothing in Accord)'],
];

// A fieldset of one box per permission, the given ones ticked (a permission the list does
// not know, held by the role, is shown too so that saving keeps it); .value() the ticked.
export function permissionBoxes(legend, given) {
  const known = PERMISSIONS.map(([p]) => p);
  const all = PERMISSIONS.concat((given || []).filter((p) => !known.includes(p)).map((p) => [p, p]));
  const boxes = all.map(([perm, text]) => {
    const box = h('input', {type: 'checkbox', id: uid('perm'), value: perm, checked: (given || []).includes(perm),
      'data-test': 'role-permission', 'data-permission': perm});
    return {box, el: h('label', {class: 'choice', for: box.id}, box, ' ', h('code', {}, perm), ' — ', text)};
  });
  const set = h('fieldset', {'data-test': 'role-permissions', class: 'choices'}, h('legend', {}, legend), boxes.map((b) => b.el));
  set.value = () => boxes.filter((b) => b.box.checked).map((b) => b.box.value);
  return set;
}

// Whether whoami says the user is an administrator.
export function isAdmin(user) {
  return ((user && user.roles) || []).includes('concordAdmin');
}
