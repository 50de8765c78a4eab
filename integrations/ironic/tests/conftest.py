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
        lines += ['[callers.%s]' % CALLER,
                  'devices = %s' % json.dumps(sorted(SWITCHES)),
                  'allowed_vlans = ["10", "100-150"]', '',
                  '[callers.ironic]',
                  'devices = %s' % json.dumps(sorted(SWITCHES))]
        lines += list(callers) + ['']
        self.config.write_text('\n'.join(lines) + extra)
        os.chmod(self.config, 0o600)

    def state_file(self, name):
        return self.dir / ('%s.json' % name)

    def reset(self):
        """Fresh switches (default inventory plus the lab VLANs), empty audit."""
        self.sim_faults = {}
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
