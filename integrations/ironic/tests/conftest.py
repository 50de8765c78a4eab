"""Test fixtures: a lab of simulated switches behind the real Mercury binary,
reached through a real OpenSSH sshd (forced command) or a socket activator
(serve-jsonrpc).

Binaries come from the Cargo target directory (``MERCURY_BIN`` /
``MERCURY_SIM_BIN`` override). Servers listen on 127.0.0.1 only, on free
ports, with every file in a temporary directory.
"""

# Ironic's test package picks oslo.service's threading backend on import; it
# must come before any module that would pick eventlet.
import ironic.tests.unit  # noqa: F401

import getpass
import json
import os
import pathlib
import shutil
import socket
import subprocess
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
TARGET = pathlib.Path(os.environ.get('CARGO_TARGET_DIR', REPO / 'target'))
MERCURY = pathlib.Path(os.environ.get('MERCURY_BIN',
                                      TARGET / 'debug' / 'mercury'))
MERCURY_SIM = pathlib.Path(os.environ.get('MERCURY_SIM_BIN',
                                          TARGET / 'debug' / 'mercury-sim'))
SSHD = '/usr/sbin/sshd'
CALLER = 'conductor-a'

#: The lab's switches: name -> (platform, MAC, port prefix).
SWITCHES = {
    'leaf-1': ('cisco_ios', '02:00:00:00:01:01'),
    'leaf-2': ('cisco_ios', '02:00:00:00:01:02'),
}
VLANS = [10, 100, 101, 102, 110, 120, 121, 130, 150]


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def wait_for_port(port, proc, log, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError('server exited %s: %s'
                               % (proc.returncode, read(log)))
        try:
            with socket.create_connection(('127.0.0.1', port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError('server did not listen on %s: %s' % (port, read(log)))


def read(path):
    try:
        return pathlib.Path(path).read_text()
    except OSError:
        return ''


class Lab(object):
    """A Mercury config with simulated switches, in a directory."""

    def __init__(self, root):
        self.dir = pathlib.Path(root)
        self.config = self.dir / 'mercury.toml'
        self.sim_faults = {}
        #: The ovsdb-server socket of a SmartNIC card (``dpu-1``), when a
        #: test uses one (the ``ovs`` fixture).
        self.ovs_db = None
        #: More lines for the card's table (``uplink = {...}``,
        #: ``ovs_vsctl = [...]``).
        self.card_extra = []
        self.write_config()

    def write_config(self, extra='', lock_timeout=20, defaults=(),
                     callers=(), manage_vlans=True):
        """``defaults``: more ``[defaults]`` lines (device keys for every
        switch); ``callers``: more ``[callers.ironic]`` lines (the JSON-RPC
        caller); ``extra``: more tables at the end."""
        lines = ['[defaults]',
                 'lock_dir = "locks"',
                 'audit_log = "audit.log"',
                 'lock_timeout = %s' % lock_timeout,
                 'command_timeout = 10',
                 'default_vlan = 10',
                 'allowed_vlans = ["10", "100-199"]',
                 'manage_vlans = %s' % ('true' if manage_vlans else 'false')]
        lines += list(defaults) + ['']
        for name, (platform, mac) in SWITCHES.items():
            argv = [str(MERCURY_SIM), '--platform', platform, '--hostname',
                    name, '--state', str(self.state_file(name))]
            argv += self.sim_faults.get(name, [])
            lines += ['[devices.%s]' % name,
                      'platform = "%s"' % platform,
                      'transport = "command"',
                      'mac = "%s"' % mac,
                      'argv = %s' % json.dumps(argv), '']
        devices = sorted(SWITCHES)
        if self.ovs_db:
            # A SmartNIC card: Mercury runs ovs-vsctl on this host against
            # the card's OVSDB (transport local), as on the card itself.
            lines += ['[devices.dpu-1]', 'platform = "ovs"',
                      'transport = "local"', 'aliases = ["dpu-1.dc1"]',
                      'ovs_db = "%s"' % self.ovs_db] + self.card_extra + ['']
            devices.append('dpu-1')
        lines += ['[callers.%s]' % CALLER,
                  'devices = %s' % json.dumps(devices),
                  'allowed_vlans = ["10", "100-150"]', '',
                  '[callers.ironic]',
                  'devices = %s' % json.dumps(devices)]
        lines += list(callers) + ['']
        self.config.write_text('\n'.join(lines) + extra)
        os.chmod(self.config, 0o600)

    def state_file(self, name):
        return self.dir / ('%s.json' % name)

    def reset(self):
        """Fresh switches (default inventory plus the lab VLANs), empty audit."""
        self.sim_faults = {}
        self.ovs_db = None
        self.card_extra = []
        self.write_config()
        for name in SWITCHES:
            self.state_file(name).unlink(missing_ok=True)
        (self.dir / 'audit.log').unlink(missing_ok=True)
        shutil.rmtree(self.dir / 'locks', ignore_errors=True)
        template = self.dir / 'template'
        if not template.exists():
            for name in SWITCHES:
                for vlan in VLANS:
                    self.mercury('add-network', '--device', name, '--vlan',
                                 str(vlan), '--reason', 'lab setup')
            template.mkdir()
            for name in SWITCHES:
                shutil.copy(self.state_file(name), template / name)
        for name in SWITCHES:
            shutil.copy(template / name, self.state_file(name))
        (self.dir / 'audit.log').unlink(missing_ok=True)

    def mercury(self, *args, stdin=None, check=True):
        proc = subprocess.run([str(MERCURY), '--config', str(self.config)]
                              + list(args), input=stdin, capture_output=True,
                              text=True, check=False)
        if check and proc.returncode != 0:
            raise AssertionError('mercury %s: %s %s' % (args, proc.stdout,
                                                        proc.stderr))
        return proc

    def state(self, name):
        out = subprocess.run([str(MERCURY_SIM), 'show', '--state',
                              str(self.state_file(name))],
                             capture_output=True, text=True, check=True)
        return json.loads(out.stdout)

    def port(self, name, port):
        return self.state(name)['running']['ports'][port]

    def audit(self):
        records = []
        for line in read(self.dir / 'audit.log').splitlines():
            try:
                records.append(json.loads(line))
            except ValueError:
                pass  # a line being written right now
        return records

    def requests(self, event='started'):
        """Audit records of requests that reached a device."""
        return [r for r in self.audit() if r['event'] == event]


@pytest.fixture(scope='session')
def binaries():
    for b in (MERCURY, MERCURY_SIM):
        if not b.exists():
            pytest.exit('%s is missing: run cargo build --workspace --bins'
                        % b, returncode=1)
    return MERCURY


@pytest.fixture(scope='session')
def lab_dir(tmp_path_factory, binaries):
    return tmp_path_factory.mktemp('lab')


@pytest.fixture
def lab(lab_dir):
    lab = Lab(lab_dir)
    lab.reset()
    return lab


class Sshd(object):
    """A real sshd on 127.0.0.1 whose only key is forced to mercury."""

    def __init__(self, root, config):
        self.dir = pathlib.Path(root)
        self.port = free_port()
        self.user = getpass.getuser()
        d = self.dir
        for name in ('host_key', 'client_key', 'other_host_key'):
            subprocess.run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '',
                            '-C', name, '-f', str(d / name)], check=True)
        self.key_file = d / 'client_key'
        command = '%s --config %s serve-ssh --caller %s' % (MERCURY, config,
                                                            CALLER)
        pub = (d / 'client_key.pub').read_text().strip()
        (d / 'authorized_keys').write_text(
            'restrict,command="%s" %s\n' % (command, pub))
        host_pub = (d / 'host_key.pub').read_text().split()
        self.known_hosts = d / 'known_hosts'
        self.known_hosts.write_text('[127.0.0.1]:%d %s %s\n'
                                    % (self.port, host_pub[0], host_pub[1]))
        other = (d / 'other_host_key.pub').read_text().split()
        self.wrong_known_hosts = d / 'wrong_known_hosts'
        self.wrong_known_hosts.write_text('[127.0.0.1]:%d %s %s\n'
                                          % (self.port, other[0], other[1]))
        self.config = d / 'sshd_config'
        self.config.write_text('\n'.join([
            'Port %d' % self.port,
            'ListenAddress 127.0.0.1',
            'HostKey %s' % (d / 'host_key'),
            'PidFile %s' % (d / 'sshd.pid'),
            'AuthorizedKeysFile %s' % (d / 'authorized_keys'),
            'StrictModes no',
            'PubkeyAuthentication yes',
            'PasswordAuthentication no',
            'KbdInteractiveAuthentication no',
            'PermitRootLogin forced-commands-only',
            'AllowUsers %s' % self.user,
            'UsePAM no',
            'LogLevel VERBOSE', '']))
        if os.geteuid() == 0:
            os.makedirs('/run/sshd', mode=0o755, exist_ok=True)
        self.log = d / 'sshd.log'
        self.proc = subprocess.Popen([SSHD, '-D', '-f', str(self.config),
                                      '-E', str(self.log)])
        wait_for_port(self.port, self.proc, self.log)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.fixture(scope='session')
def sshd(tmp_path_factory, lab_dir):
    if not os.path.exists(SSHD):
        pytest.exit('%s is missing: install openssh-server' % SSHD,
                    returncode=1)
    server = Sshd(tmp_path_factory.mktemp('sshd'), lab_dir / 'mercury.toml')
    yield server
    server.stop()


def openssl(cwd, *args):
    subprocess.run(['openssl'] + list(args), cwd=str(cwd), check=True,
                   capture_output=True)


class Pki(object):
    """A throwaway CA and certificates it signed (openssl CLI), keys 0600."""

    def __init__(self, root):
        self.dir = pathlib.Path(root)
        openssl(self.dir, 'req', '-x509', '-newkey', 'ec', '-pkeyopt',
                'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
                '-subj', '/CN=Mercury test CA',
                '-addext', 'basicConstraints=critical,CA:TRUE',
                '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
                '-keyout', 'ca.key', '-out', 'ca.crt')
        os.chmod(self.dir / 'ca.key', 0o600)
        self.ca = self.dir / 'ca.crt'

    def issue(self, name, server):
        ext = self.dir / (name + '.ext')
        ext.write_text(
            'basicConstraints=CA:FALSE\n'
            + ('subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n'
               if server else 'extendedKeyUsage=clientAuth\n'))
        openssl(self.dir, 'req', '-newkey', 'ec', '-pkeyopt',
                'ec_paramgen_curve:prime256v1', '-nodes', '-subj',
                '/CN=' + name, '-keyout', name + '.key', '-out',
                name + '.csr')
        openssl(self.dir, 'x509', '-req', '-in', name + '.csr', '-CA',
                'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2',
                '-extfile', str(ext), '-out', name + '.crt')
        os.chmod(self.dir / (name + '.key'), 0o600)
        return self.dir / (name + '.crt'), self.dir / (name + '.key')


class Activator(object):
    """serve-jsonrpc --inetd behind a socket activator on 127.0.0.1 (what a
    systemd Accept=yes socket unit does); ``tls_args`` are serve-jsonrpc's
    own TLS flags (--tls-cert, --tls-key, --tls-client-ca)."""

    def __init__(self, root, config, htpasswd, tls_args=()):
        root = pathlib.Path(root)
        self.port = free_port()
        self.log = root / 'activator.log'
        command = [str(MERCURY), '--config', str(config), 'serve-jsonrpc',
                   '--inetd', '--htpasswd', str(htpasswd)] + list(tls_args)
        activate = shutil.which('systemd-socket-activate')
        if activate:
            argv = [activate, '--inetd', '--accept', '-l',
                    '127.0.0.1:%d' % self.port] + command
        elif shutil.which('socat') and not tls_args:
            argv = ['socat', 'TCP-LISTEN:%d,bind=127.0.0.1,fork,reuseaddr'
                    % self.port, 'EXEC:%s' % ' '.join(command)]
        else:
            pytest.exit('systemd-socket-activate is not installed',
                        returncode=1)
        with open(self.log, 'w') as log:
            self.proc = subprocess.Popen(argv, stdout=log,
                                         stderr=subprocess.STDOUT)
        wait_for_port(self.port, self.proc, self.log)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.fixture(scope='session')
def jsonrpc_server(tmp_path_factory, lab_dir):
    import bcrypt
    root = tmp_path_factory.mktemp('jsonrpc')
    htpasswd = root / 'htpasswd'
    hashed = bcrypt.hashpw(b'secret', bcrypt.gensalt(4)).decode()
    htpasswd.write_text('ironic:%s\n' % hashed.replace('$2b$', '$2y$', 1))
    os.chmod(htpasswd, 0o600)
    server = Activator(root, lab_dir / 'mercury.toml', htpasswd)
    yield server
    server.stop()


@pytest.fixture(scope='session')
def pki(tmp_path_factory):
    pki = Pki(tmp_path_factory.mktemp('pki'))
    pki.server = pki.issue('server', True)
    pki.client = pki.issue('conductor', False)
    return pki


@pytest.fixture(scope='session')
def jsonrpc_tls_server(tmp_path_factory, lab_dir, jsonrpc_server, pki):
    """Mercury terminating TLS itself (TLS 1.3 minimum)."""
    root = tmp_path_factory.mktemp('jsonrpc-tls')
    htpasswd = pathlib.Path(jsonrpc_server.log).parent / 'htpasswd'
    cert, key = pki.server
    server = Activator(root, lab_dir / 'mercury.toml', htpasswd,
                       ['--tls-cert', str(cert), '--tls-key', str(key)])
    server.cafile = pki.ca
    yield server
    server.stop()


@pytest.fixture(scope='session')
def jsonrpc_mtls_server(tmp_path_factory, lab_dir, jsonrpc_server, pki):
    """As jsonrpc_tls_server, and a client certificate signed by the test CA
    is required (--tls-client-ca)."""
    root = tmp_path_factory.mktemp('jsonrpc-mtls')
    htpasswd = pathlib.Path(jsonrpc_server.log).parent / 'htpasswd'
    cert, key = pki.server
    server = Activator(root, lab_dir / 'mercury.toml', htpasswd,
                       ['--tls-cert', str(cert), '--tls-key', str(key),
                        '--tls-client-ca', str(pki.ca)])
    server.cafile = pki.ca
    yield server
    server.stop()


def find_program(name):
    for d in [None, '/usr/sbin', '/usr/local/sbin', '/sbin']:
        path = shutil.which(name, path=d)
        if path:
            return path
    return None


class Ovs(object):
    """A private Open vSwitch: ovsdb-server on a database made from the
    installed schema, and ovs-vswitchd with dummy devices
    (``--enable-dummy=override --disable-system``: no kernel module, no host
    network device is touched), on a unix socket in a temporary directory,
    with a ``br-int`` bridge (``datapath_type=netdev``)."""

    SCHEMAS = ('/usr/share/openvswitch/vswitch.ovsschema',
               '/usr/local/share/openvswitch/vswitch.ovsschema')

    def __init__(self, root):
        self.dir = pathlib.Path(root)
        d = self.dir
        self.vsctl_bin = find_program('ovs-vsctl')
        self.appctl = find_program('ovs-appctl')
        schema = next(s for s in self.SCHEMAS if os.path.exists(s))
        env = dict(os.environ, OVS_RUNDIR=str(d), OVS_LOGDIR=str(d),
                   OVS_DBDIR=str(d), OVS_SYSCONFDIR=str(d))
        subprocess.run([find_program('ovsdb-tool'), 'create',
                        str(d / 'conf.db'), schema], check=True)
        self.sock = d / 'db.sock'
        self.db = 'unix:%s' % self.sock
        self.procs = []
        self.procs.append(subprocess.Popen(
            [find_program('ovsdb-server'), str(d / 'conf.db'),
             '--remote=punix:%s' % self.sock,
             '--unixctl=%s' % (d / 'ovsdb-server.ctl'),
             '--log-file=%s' % (d / 'ovsdb-server.log'), '--no-chdir'],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + 20
        while subprocess.run([self.vsctl_bin, '--db=%s' % self.db,
                              '--no-wait', '--timeout=2', 'init'],
                             capture_output=True).returncode != 0:
            if time.monotonic() > deadline:
                raise RuntimeError('ovsdb-server did not come up: %s'
                                   % read(d / 'ovsdb-server.log'))
            time.sleep(0.05)
        self.procs.append(subprocess.Popen(
            [find_program('ovs-vswitchd'), self.db,
             '--enable-dummy=override', '--disable-system',
             '--unixctl=%s' % (d / 'ovs-vswitchd.ctl'),
             '--log-file=%s' % (d / 'ovs-vswitchd.log'), '--no-chdir'],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL))
        # Waits for ovs-vswitchd to reconfigure: proves it is up.
        self.vsctl('--', '--may-exist', 'add-br', 'br-int', '--', 'set',
                   'Bridge', 'br-int', 'datapath_type=netdev')

    def vsctl(self, *args):
        out = subprocess.run([self.vsctl_bin, '--db=%s' % self.db,
                              '--timeout=10'] + list(args),
                             capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise AssertionError('ovs-vsctl %s: %s' % (args, out.stderr))
        return out.stdout.strip()

    def ports(self, bridge='br-int'):
        return set(self.vsctl('list-ports', bridge).split())

    def external_ids(self, iface):
        """An Interface's external_ids as a dict."""
        text = self.vsctl('--format=json', '--columns=external_ids', 'list',
                          'Interface', iface)
        rows = json.loads(text)['data']
        return {k: v for k, v in rows[0][0][1]} if rows else {}

    def tag(self, port):
        value = self.vsctl('get', 'Port', port, 'tag')
        return None if value == '[]' else int(value)

    def stop(self):
        for b in self.vsctl('list-br').split():
            self.vsctl('--if-exists', 'del-br', b)
        for ctl in ('ovs-vswitchd.ctl', 'ovsdb-server.ctl'):
            subprocess.run([self.appctl, '-t', str(self.dir / ctl), 'exit'],
                           capture_output=True, check=False)
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()


@pytest.fixture(scope='session')
def ovs_server(tmp_path_factory):
    missing = [p for p in ('ovsdb-tool', 'ovsdb-server', 'ovs-vswitchd',
                           'ovs-vsctl', 'ovs-appctl') if not find_program(p)]
    if missing or not any(os.path.exists(s) for s in Ovs.SCHEMAS):
        if os.environ.get('CI'):
            pytest.exit('Open vSwitch is not installed (scripts/test '
                        'installs openvswitch-switch)', returncode=1)
        pytest.skip('Open vSwitch is not installed: %s' % missing)
    server = Ovs(tmp_path_factory.mktemp('ovs'))
    yield server
    server.stop()


@pytest.fixture
def ovs(lab, ovs_server):
    """The lab with a SmartNIC card dpu-1 (alias dpu-1.dc1) whose OVSDB is
    ovs_server; representors a test plugged are removed after it."""
    lab.ovs_db = ovs_server.db
    lab.write_config()
    yield ovs_server
    for port in ovs_server.ports():
        ovs_server.vsctl('--if-exists', 'del-port', 'br-int', port)
