"""The ``[mercury]`` configuration group of the Ironic conductor."""

from oslo_config import cfg

GROUP = 'mercury'

opts = [
    cfg.StrOpt('host',
               help='Executor host running Mercury. The SSH key below must be '
                    'restricted there by an authorized_keys line forcing '
                    '"mercury serve-ssh --caller NAME".'),
    cfg.PortOpt('port', default=22, help='SSH port of the executor host.'),
    cfg.StrOpt('user', default='mercury',
               help='Login user on the executor host.'),
    cfg.StrOpt('key_file',
               help='Private key for the executor host (its public half is '
                    'the forced-command key).'),
    cfg.StrOpt('known_hosts_file',
               help='known_hosts file holding the executor host key. Host '
                    'keys are always checked strictly; there is no '
                    'trust-on-first-use. Default: the ssh client default.'),
    cfg.StrOpt('ssh_command', default='ssh',
               help='The OpenSSH client program.'),
    cfg.IntOpt('connect_timeout', default=10, min=1,
               help='Seconds to wait for the SSH connection.'),
    cfg.IntOpt('timeout', default=300, min=1,
               help='Seconds one Mercury request may take, end to end.'),
    cfg.IntOpt('retries', default=3, min=0,
               help='How many more times a request is sent when Mercury '
                    'answers with a retryable exit code.'),
    cfg.FloatOpt('retry_interval', default=2.0, min=0,
                 help='Seconds between retries.'),
    cfg.ListOpt('retry_exit_codes', default=['75'],
                help='Mercury exit codes that are retried: 75 (temporary: '
                     'device lock or config database busy). 69 (device '
                     'unreachable) may be added.'),
    cfg.StrOpt('reason_format',
               default='ironic: {action} {network} network for node {node}',
               help='The "reason" Mercury records in its audit log. Fields: '
                    '{action} (configure/unconfigure), {network} (the '
                    'lifecycle network), {node} (UUID), {node_name}, '
                    '{request_id}.'),
    cfg.BoolOpt('reset_to_idle_on_failure', default=True,
                help='When configuring a network fails part-way, return the '
                     'node\'s ports to the idle network before raising, so '
                     'no port is left on a half-applied network.'),
]


def register_opts(conf):
    conf.register_opts(opts, group=GROUP)


def list_opts():
    return [(GROUP, opts)]


register_opts(cfg.CONF)
