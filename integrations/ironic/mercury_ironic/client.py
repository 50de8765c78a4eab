"""Calling Mercury on the executor host over SSH.

One call is one ``ssh`` run: the request goes as one JSON object on stdin to
the forced command (``mercury serve-ssh``), and the exit code plus the one
JSON result on stdout come back. Host keys are checked strictly and only the
configured key is offered. Nothing here knows about Ironic objects.
"""

import json
import subprocess
import time

from oslo_config import cfg
from oslo_log import log

from mercury_ironic import conf as mercury_conf  # noqa: F401 (registers opts)

LOG = log.getLogger(__name__)
CONF = cfg.CONF

#: Exit status of the ssh client itself (connection, host key, auth).
SSH_FAILED = 255

#: Mercury exit codes meaning "the request itself is wrong or not allowed".
INVALID_CODES = (64, 65, 77)


class MercuryError(Exception):
    """Mercury (or the SSH hop to it) did not succeed.

    :ivar rc: Mercury's exit code (255: the ssh client failed).
    :ivar result: Mercury's JSON result, when there was one.
    """

    def __init__(self, message, rc, result=None):
        super().__init__(message)
        self.rc = rc
        self.result = result or {}

    @property
    def invalid(self):
        """True when retrying the same request cannot help: bad data, policy."""
        return self.rc in INVALID_CODES


class MercuryClient(object):
    """Runs Mercury requests through ``ssh`` with the ``[mercury]`` options."""

    def __init__(self, conf=None):
        self.conf = conf or CONF.mercury

    def argv(self):
        c = self.conf
        argv = [c.ssh_command, '-T',
                '-o', 'BatchMode=yes',
                '-o', 'StrictHostKeyChecking=yes',
                '-o', 'IdentitiesOnly=yes',
                '-o', 'ConnectTimeout=%d' % c.connect_timeout,
                '-o', 'ServerAliveInterval=15',
                '-p', str(c.port)]
        if c.known_hosts_file:
            argv += ['-o', 'UserKnownHostsFile=%s' % c.known_hosts_file,
                     '-o', 'GlobalKnownHostsFile=/dev/null']
        if c.key_file:
            argv += ['-i', c.key_file]
        if c.user:
            argv += ['-l', c.user]
        # "run": JSON request on stdin (the forced command ignores anything
        # but its own grammar).
        argv += ['--', c.host, 'run']
        return argv

    def call(self, request):
        """Sends one request; returns Mercury's result dict.

        Exit codes listed in ``retry_exit_codes`` are retried up to
        ``retries`` times, ``retry_interval`` seconds apart.

        :raises: MercuryError with Mercury's message on any failure.
        """
        retry_codes = {int(c) for c in self.conf.retry_exit_codes}
        payload = json.dumps(request).encode('utf-8')
        attempt = 0
        while True:
            attempt += 1
            rc, result, stderr = self._once(payload)
            if rc == 0 and result.get('ok', False):
                LOG.info('Mercury %(op)s on %(dev)s: %(msg)s',
                         {'op': result.get('op'), 'dev': result.get('device'),
                          'msg': result.get('msg')})
                return result
            error = self._error(rc, result, stderr)
            if rc in retry_codes and attempt <= self.conf.retries:
                LOG.warning('Mercury %(op)s: %(err)s; retry %(n)d of %(max)d '
                            'in %(s)ss',
                            {'op': request.get('op'), 'err': error, 'n': attempt,
                             'max': self.conf.retries,
                             's': self.conf.retry_interval})
                time.sleep(self.conf.retry_interval)
                continue
            raise error

    def _once(self, payload):
        if not self.conf.host:
            raise MercuryError('[mercury]host is not configured', 78)
        try:
            proc = subprocess.run(self.argv(), input=payload,
                                  capture_output=True,
                                  timeout=self.conf.timeout, check=False)
        except subprocess.TimeoutExpired:
            return 75, {}, ('no answer from Mercury within %ss'
                            % self.conf.timeout)
        except OSError as e:
            raise MercuryError('cannot run %s: %s'
                               % (self.conf.ssh_command, e), SSH_FAILED)
        stdout = proc.stdout.decode('utf-8', 'replace').strip()
        stderr = proc.stderr.decode('utf-8', 'replace').strip()
        try:
            result = json.loads(stdout) if stdout else {}
        except ValueError:
            result = {}
        if not isinstance(result, dict):
            result = {}
        return proc.returncode, result, stderr

    def _error(self, rc, result, stderr):
        if result.get('msg'):
            msg = '%s [mercury rc %s %s, request %s]' % (
                result['msg'], result.get('rc', rc),
                result.get('error_kind') or 'error',
                result.get('request_id'))
            return MercuryError(msg, result.get('rc', rc), result)
        if rc == SSH_FAILED:
            last = stderr.splitlines()[-1] if stderr else 'ssh failed'
            return MercuryError('cannot reach Mercury on %s: %s'
                                % (self.conf.host, last), rc)
        return MercuryError('Mercury exited %s without a result: %s'
                            % (rc, stderr[-500:] or 'no output'), rc)
