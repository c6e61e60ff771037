import { BENCH_DIRECTORY, benchFiles } from '../host/bench-files';

/**
 * The comparison's files (benchFiles) as each peer tool's own policy, every path under `root`
 * so no tool touches this machine's /srv. Each is what an operator of that tool would write:
 * one resource per file, content inline, mode 0644, in one directory of mode 0755.
 */

/** A Puppet manifest for `puppet apply`. */
export function puppetManifest(root: string, count: number): string {
  const quote = (text: string): string => `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\$/g, '\\$').replace(/\n/g, '\\n')}"`;
  return [
    `file { ${quote(`${root}${BENCH_DIRECTORY}`)}: ensure => directory, mode => '0755' }`,
    ...benchFiles(count).map((file) => `file { ${quote(`${root}${file.path}`)}: ensure => file, content => ${quote(file.text)}, mode => '0644' }`),
    '',
  ].join('\n');
}

/** An Ansible playbook for `ansible-playbook -c local` (JSON, which YAML reads): a directory task and one copy task looping over the files. */
export function ansiblePlaybook(root: string, count: number): string {
  return JSON.stringify([{
    hosts: 'localhost',
    connection: 'local',
    gather_facts: false,
    tasks: [
      { name: 'directory', 'ansible.builtin.file': { path: `${root}${BENCH_DIRECTORY}`, state: 'directory', mode: '0755' } },
      {
        name: 'files',
        'ansible.builtin.copy': { dest: '{{ item.path }}', content: '{{ item.text }}', mode: '0644' },
        loop: benchFiles(count).map((file) => ({ path: `${root}${file.path}`, text: file.text })),
        loop_control: { label: '{{ item.path }}' },
      },
    ],
  }], null, 1);
}

/** A CFEngine 3 policy for `cf-agent --no-lock --file`: one files promise per file. */
export function cfenginePolicy(root: string, count: number): string {
  const quote = (text: string): string => `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '$(const.n)')}"`;
  return [
    'body common control',
    '{',
    '  bundlesequence => { "mesh_bench" };',
    '}',
    '',
    'body perms mesh_mode(m)',
    '{',
    '  mode => "$(m)";',
    '  rxdirs => "false";',
    '}',
    '',
    'bundle agent mesh_bench',
    '{',
    '  files:',
    `    ${quote(`${root}${BENCH_DIRECTORY}/.`)}`,
    '      create => "true",',
    '      perms => mesh_mode("755");',
    ...benchFiles(count).flatMap((file) => [
      `    ${quote(`${root}${file.path}`)}`,
      '      create => "true",',
      `      content => ${quote(file.text)},`,
      '      perms => mesh_mode("644");',
    ]),
    '}',
    '',
  ].join('\n');
}
