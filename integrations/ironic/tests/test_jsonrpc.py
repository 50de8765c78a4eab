"""Stock Ironic against ``mercury serve-jsonrpc --inetd``: Ironic's own
networking RPC client (``ironic.networking.rpcapi.NetworkingAPI`` over
``ironic.common.json_rpc.client``, http_basic auth) and Ironic's own
``ironic-networking`` network interface, through a socket activator on
127.0.0.1 (plain, and with Mercury's built-in TLS), with the simulated
switches' state asserted.
"""

import socket
import ssl

import pytest
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

from ironic.common import context as ironic_context
from ironic.common import exception
from ironic.common.json_rpc import client as json_rpc_client
from ironic.common import states
from ironic.conductor import task_manager
from ironic.networking import api as networking_api
from ironic.networking import rpcapi
from ironic.tests.unit.db import base as db_base
from ironic.tests.unit.objects import utils as obj_utils

CONF = cfg.CONF
GROUP = 'ironic_networking_json_rpc'

# The http_basic plugin's options (username, password) are registered at
# run time by keystoneauth; register them up front so tests can set them.
CONF.register_opts(ks_loading.get_auth_plugin_conf_options('http_basic'),
                   GROUP)


def gi(n):
    return 'GigabitEthernet1/0/%d' % n


class JsonRpcTestCase(db_base.DbTestCase):
    # Loading the fake hardware type probes for programs.
    block_execute = False


    def _clear_attrs(self):
        for key in [k for k in self.__dict__
                    if k[0] != '_' and not k.startswith('test')]:
            del self.__dict__[key]

    @pytest.fixture(autouse=True)
    def _servers(self, lab, jsonrpc_server):
        self.lab = lab
        self.server = jsonrpc_server

    def setUp(self):
        super().setUp()
        self.config(rpc_transport='json-rpc', group='ironic_networking')
        self.config(auth_strategy='http_basic', host_ip='127.0.0.1',
                    port=self.server.port, username='ironic',
                    password='secret', group=GROUP)
        self.reset_client()
        self.addCleanup(self.reset_client)
        self.ctx = ironic_context.get_admin_context()

    @staticmethod
    def reset_client():
        # Ironic caches the API object and the keystoneauth adapter.
        networking_api._NETWORKING_API = None
        json_rpc_client._SESSIONS.pop(GROUP, None)

    def api(self):
        return rpcapi.NetworkingAPI()


class NetworkingApiTestCase(JsonRpcTestCase):

    def test_update_port_then_reset_port(self):
        api = self.api()
        result = api.update_port(
            self.ctx, '02:00:00:00:01:01', 'Gi1/0/5',
            'Ironic Port 7d1f6c2e-0000-4000-8000-000000000001', 'access',
            120, allowed_vlans=None, lag_name=None, default_vlan=10)
        self.assertEqual('configured', result['status'])
        self.assertEqual(120, result['native_vlan'])
        self.assertEqual(120, self.lab.port('leaf-1', gi(5))['access_vlan'])

        result = api.reset_port(self.ctx, '02:00:00:00:01:01', 'Gi1/0/5',
                                120, allowed_vlans=None, default_vlan=10)
        self.assertEqual('reset', result['status'])
        self.assertEqual(10, self.lab.port('leaf-1', gi(5))['access_vlan'])

        # One ordinary Mercury request per call, audited with the HTTP user.
        started = self.lab.requests()
        self.assertEqual(['update_port', 'reset_port'],
                         [r['what']['op'] for r in started])
        self.assertEqual({'ironic'}, {r['who']['http_user'] for r in started})

    def test_trunk_by_device_name(self):
        self.api().update_port(self.ctx, 'leaf-2', 'Gi1/0/6', 'd', 'trunk',
                               130, allowed_vlans=[101, 102], lag_name=None,
                               default_vlan=None)
        port = self.lab.port('leaf-2', gi(6))
        self.assertEqual(('trunk', 130), (port['mode'], port['native_vlan']))
        self.assertTrue({101, 102} <= set(port['allowed_vlans']), port)

    def test_get_switches(self):
        switches = self.api().get_switches(self.ctx)
        self.assertEqual({'02:00:00:00:01:01', '02:00:00:00:01:02'},
                         set(switches))
        self.assertEqual('leaf-1',
                         switches['02:00:00:00:01:01']['device_name'])

    def test_policy_refusal_raises_invalid_parameter_value(self):
        e = self.assertRaises(
            exception.InvalidParameterValue, self.api().update_port,
            self.ctx, 'leaf-1', 'Gi1/0/5', 'd', 'access', 300)
        self.assertIn('denied by devices.leaf-1.allowed_vlans', str(e))
        self.assertEqual([], self.lab.requests())

    def test_device_failure_raises_network_error(self):
        self.lab.sim_faults['leaf-1'] = ['--fault',
                                         'reject=switchport access vlan 121']
        self.lab.write_config()
        e = self.assertRaises(
            exception.NetworkError, self.api().update_port,
            self.ctx, 'leaf-1', 'Gi1/0/5', 'd', 'access', 121)
        self.assertIn('mercury rc 1 device_rejected', str(e))

    def test_wrong_password_gets_401(self):
        self.config(password='wrong', group=GROUP)
        self.reset_client()
        e = self.assertRaises(ks_exc.Unauthorized, self.api().get_switches,
                              self.ctx)
        self.assertIn('Incorrect username or password', str(e))
        # Nothing ran; the failed login is audited with the client.
        self.assertEqual([], self.lab.requests())
        refused = [r for r in self.lab.audit() if r['event'] == 'refused']
        self.assertEqual(1, len(refused), self.lab.audit())
        self.assertEqual('ironic', refused[0]['who']['http_user'])
        self.assertEqual('127.0.0.1', refused[0]['who']['http_client'])

    def test_config_change_applies_without_restart(self):
        api = self.api()
        api.update_port(self.ctx, 'leaf-1', 'Gi1/0/5', 'd', 'access', 150)
        # Narrow the policy; the next call (on the same kept-alive
        # connection) already sees it.
        text = self.lab.config.read_text()
        self.lab.config.write_text(text.replace('"100-199"', '"100-149"'))
        self.assertRaises(exception.InvalidParameterValue, api.update_port,
                          self.ctx, 'leaf-1', 'Gi1/0/5', 'd', 'access', 150)


class TlsTestCase(JsonRpcTestCase):
    """Mercury's built-in TLS (serve-jsonrpc --tls-cert/--tls-key) behind the
    socket activator, with Ironic's client verifying the certificate against
    its cafile, as with the stock service's TLS."""

    @pytest.fixture(autouse=True)
    def _tls(self, jsonrpc_tls_server):
        self.tls = jsonrpc_tls_server

    def test_update_port_over_tls(self):
        self.config(port=self.tls.port, client_use_ssl=True,
                    cafile=str(self.tls.cafile), group=GROUP)
        self.reset_client()
        self.api().update_port(self.ctx, 'leaf-1', 'Gi1/0/4', 'd', 'access',
                               110)
        self.assertEqual(110, self.lab.port('leaf-1', gi(4))['access_vlan'])
        # The client's address comes from the socket (no activator variable).
        self.assertEqual({'127.0.0.1'}, {r['who']['http_client']
                                         for r in self.lab.requests()})

    def _handshake(self, maximum=None):
        ctx = ssl.create_default_context(cafile=str(self.tls.cafile))
        if maximum:
            ctx.maximum_version = maximum
        with socket.create_connection(('127.0.0.1', self.tls.port)) as raw:
            with ctx.wrap_socket(raw, server_hostname='127.0.0.1') as s:
                return s.version()

    def test_python_default_context_negotiates_tls13(self):
        # What requests/urllib3 (and so Ironic's client) use: TLS 1.2 to
        # maximum supported; Mercury's 1.3 floor is met.
        self.assertEqual('TLSv1.3', self._handshake())

    def test_tls12_only_client_is_refused(self):
        self.assertRaises(ssl.SSLError, self._handshake,
                          ssl.TLSVersion.TLSv1_2)


class MutualTlsTestCase(JsonRpcTestCase):
    """--tls-client-ca: Ironic's client presents [..._json_rpc] certfile and
    keyfile; without them it gets no answer."""

    @pytest.fixture(autouse=True)
    def _tls(self, jsonrpc_mtls_server, pki):
        self.tls = jsonrpc_mtls_server
        self.pki = pki

    def test_conductor_certificate_required(self):
        self.config(port=self.tls.port, client_use_ssl=True,
                    cafile=str(self.tls.cafile), group=GROUP)
        self.reset_client()
        self.assertRaises((ks_exc.SSLError, ks_exc.ConnectFailure),
                          self.api().update_port, self.ctx,
                          'leaf-1', 'Gi1/0/3', 'd', 'access', 110)
        self.assertEqual([], self.lab.requests())

        cert, key = self.pki.client
        self.config(certfile=str(cert), keyfile=str(key), group=GROUP)
        self.reset_client()
        self.api().update_port(self.ctx, 'leaf-1', 'Gi1/0/3', 'd', 'access',
                               110)
        self.assertEqual(110, self.lab.port('leaf-1', gi(3))['access_vlan'])
        started = self.lab.requests()
        self.assertEqual(1, len(started))
        self.assertTrue(started[0]['who']['tls_client'].startswith('SHA256:'))


class StockInterfaceTestCase(JsonRpcTestCase):
    """Ironic's own ironic-networking interface, unchanged, with Mercury as
    its networking service."""

    def test_provisioning_and_tenant_through_ironic_networking(self):
        self.config(enabled_hardware_types=['fake-hardware'],
                    enabled_network_interfaces=['ironic-networking', 'noop'])
        self.config(idle_network='access/native_vlan=10',
                    provisioning_network='access/native_vlan=100',
                    group='ironic_networking')
        node = obj_utils.create_test_node(
            self.context, network_interface='ironic-networking',
            provision_state=states.DEPLOYING)
        obj_utils.create_test_port(
            self.context, node_id=node.id, address='52:54:00:00:00:07',
            local_link_connection={'switch_id': '02:00:00:00:01:01',
                                   'port_id': 'Gi1/0/7'},
            extra={'switchport': {'mode': 'access', 'native_vlan': 120}})
        with task_manager.acquire(self.context, node.uuid) as task:
            net = task.driver.network
            net.add_provisioning_network(task)
            self.assertEqual(100, self.lab.port('leaf-1', gi(7))['access_vlan'])
            net.remove_provisioning_network(task)
            self.assertEqual(10, self.lab.port('leaf-1', gi(7))['access_vlan'])
            net.configure_tenant_networks(task)
            self.assertEqual(120, self.lab.port('leaf-1', gi(7))['access_vlan'])
            net.unconfigure_tenant_networks(task)
            self.assertEqual(10, self.lab.port('leaf-1', gi(7))['access_vlan'])
        reasons = {r['why']['reason'] for r in self.lab.requests()}
        self.assertTrue(all('over JSON-RPC' in r for r in reasons), reasons)


class StockCallsTestCase(JsonRpcTestCase):
    """What a stock conductor sends through ironic-networking, call by call,
    with the switch state asserted (issue 16, JSON-RPC items)."""

    LEAF1 = '02:00:00:00:01:01'
    UUID = '7d1f6c2e-0000-4000-8000-000000000002'

    def test_idle_vlan_that_is_not_the_devices_is_refused_naming_both(self):
        # [ironic_networking]idle_network = access/native_vlan=20 while the
        # switch's idle VLAN is 10: nothing is sent, and the message says
        # how to pair them.
        e = self.assertRaises(
            exception.InvalidParameterValue, self.api().update_port,
            self.ctx, self.LEAF1, 'Gi1/0/5', 'd', 'access', 120,
            allowed_vlans=None, lag_name=None, default_vlan=20)
        msg = str(e)
        self.assertIn('default_vlan 20', msg)
        self.assertIn('devices.leaf-1.default_vlan = 10', msg)
        self.assertIn('idle_network = access/native_vlan=10', msg)
        self.assertEqual([], self.lab.requests())
        self.assertNotEqual(120, self.lab.port('leaf-1', gi(5))['access_vlan'])
        # An idle VLAN the caller may use is accepted, and restored.
        api = self.api()
        api.update_port(self.ctx, self.LEAF1, 'Gi1/0/5', 'd', 'access', 120,
                        default_vlan=150)
        self.assertEqual(120, self.lab.port('leaf-1', gi(5))['access_vlan'])
        api.reset_port(self.ctx, self.LEAF1, 'Gi1/0/5', 120,
                       default_vlan=150)
        self.assertEqual(150, self.lab.port('leaf-1', gi(5))['access_vlan'])

    def test_teardown_after_allowed_vlans_is_narrowed(self):
        api = self.api()
        api.update_port(self.ctx, self.LEAF1, 'Gi1/0/5', 'd', 'trunk', 150,
                        allowed_vlans=[120, 150], default_vlan=10)
        # The network team narrows what may be added, and keeps the right
        # to remove what was handed out before.
        text = self.lab.config.read_text().replace(
            'allowed_vlans = ["10", "100-199"]',
            'allowed_vlans = ["10", "100-119"]\nremove_vlans = ["100-199"]', 1)
        self.lab.config.write_text(text)
        self.assertRaises(exception.InvalidParameterValue, api.update_port,
                          self.ctx, self.LEAF1, 'Gi1/0/6', 'd', 'access', 150,
                          default_vlan=10)
        api.reset_port(self.ctx, self.LEAF1, 'Gi1/0/5', 150,
                       allowed_vlans=[120, 150], default_vlan=10)
        port = self.lab.port('leaf-1', gi(5))
        self.assertEqual(('access', 10), (port['mode'], port['access_vlan']))
        # Without removal rights the same tear-down is refused, by name.
        api.update_port(self.ctx, self.LEAF1, 'Gi1/0/7', 'd', 'access', 110,
                        default_vlan=10)
        self.lab.config.write_text(self.lab.config.read_text().replace(
            'remove_vlans = ["100-199"]', 'remove_vlans = ["100-109"]'))
        e = self.assertRaises(exception.InvalidParameterValue, api.reset_port,
                              self.ctx, self.LEAF1, 'Gi1/0/7', 110,
                              default_vlan=10)
        self.assertIn('devices.leaf-1.remove_vlans', str(e))
        self.assertEqual(110, self.lab.port('leaf-1', gi(7))['access_vlan'])

    def test_reset_clears_the_description_and_admin_state(self):
        self.lab.write_config(defaults=['shut_unused_ports = true'])
        api = self.api()
        api.update_port(self.ctx, self.LEAF1, 'Gi1/0/5',
                        'Ironic Port %s' % self.UUID, 'access', 120,
                        default_vlan=10)
        port = self.lab.port('leaf-1', gi(5))
        self.assertEqual('Ironic Port %s' % self.UUID, port['description'])
        self.assertTrue(port['admin_up'])
        api.reset_port(self.ctx, self.LEAF1, 'Gi1/0/5', 120, default_vlan=10)
        port = self.lab.port('leaf-1', gi(5))
        self.assertEqual((10, '', False), (port['access_vlan'],
                                           port['description'],
                                           port['admin_up']))

    def test_update_port_with_lag_name_joins_the_lag(self):
        # ironic-networking's port_changed sends the switchport's lag_name.
        api = self.api()
        result = api.update_port(self.ctx, self.LEAF1, 'Gi1/0/8', 'd',
                                 'trunk', 130, allowed_vlans=[101, 102],
                                 lag_name='20', default_vlan=10)
        self.assertEqual('configured', result['status'])
        running = self.lab.state('leaf-1')['running']
        lag = running['lags']['Port-channel20']
        self.assertEqual([gi(8)], lag['members'])
        self.assertEqual('lacp', lag['mode'])
        self.assertEqual(('trunk', 130), (lag['mode_l2'], lag['native_vlan']))
        self.assertTrue({101, 102} <= set(lag['allowed_vlans']), lag)
        self.assertEqual('Port-channel20', running['ports'][gi(8)]['lag'])
        # Reset: the member leaves the LAG and is back at idle.
        api.reset_port(self.ctx, self.LEAF1, 'Gi1/0/8', 130,
                       allowed_vlans=[101, 102], default_vlan=10)
        running = self.lab.state('leaf-1')['running']
        members = running['lags'].get('Port-channel20', {}).get('members', [])
        self.assertNotIn(gi(8), members)
        self.assertEqual((None, 10), (running['ports'][gi(8)]['lag'],
                                      running['ports'][gi(8)]['access_vlan']))

    def test_unknown_switch_is_switch_not_found(self):
        api = self.api()
        for call in (lambda: api.update_port(self.ctx, '02:00:00:00:09:09',
                                             'Gi1/0/5', 'd', 'access', 120),
                     lambda: api.reset_port(self.ctx, 'leaf-9', 'Gi1/0/5',
                                            120)):
            e = self.assertRaises(exception.SwitchNotFound, call)
            self.assertIn('could not be found', str(e))
        self.assertEqual([], self.lab.requests())

    def test_missing_vlan_created_on_demand_with_manage_vlans(self):
        self.assertNotIn('140', self.lab.state('leaf-1')['running']['vlans'])
        self.api().update_port(self.ctx, self.LEAF1, 'Gi1/0/5', 'd',
                               'access', 140, default_vlan=10)
        running = self.lab.state('leaf-1')['running']
        self.assertIn('140', running['vlans'])
        self.assertEqual(140, running['ports'][gi(5)]['access_vlan'])
        # One request, one session: the VLAN and the port together.
        self.assertEqual(1, len(self.lab.requests()))

    def test_missing_vlan_refused_without_manage_vlans(self):
        self.lab.write_config(manage_vlans=False)
        e = self.assertRaises(
            exception.InvalidParameterValue, self.api().update_port,
            self.ctx, self.LEAF1, 'Gi1/0/5', 'd', 'access', 140,
            default_vlan=10)
        self.assertIn('VLAN 140 not configured on leaf-1', str(e))
        self.assertIn('devices.leaf-1.manage_vlans', str(e))
        running = self.lab.state('leaf-1')['running']
        self.assertNotIn('140', running['vlans'])
        self.assertNotEqual(140, running['ports'][gi(5)]['access_vlan'])


class StockPortChangedTestCase(JsonRpcTestCase):
    """Ironic's own ironic-networking interface: port_changed on a deployed
    node sends the switchport's lag_name, and Mercury puts the port in that
    LAG; a stock tear-down then takes it out again."""

    def test_port_changed_with_lag_name_through_ironic_networking(self):
        self.config(enabled_hardware_types=['fake-hardware'],
                    enabled_network_interfaces=['ironic-networking', 'noop'])
        self.config(idle_network='access/native_vlan=10',
                    group='ironic_networking')
        node = obj_utils.create_test_node(
            self.context, network_interface='ironic-networking',
            provision_state=states.ACTIVE)
        port = obj_utils.create_test_port(
            self.context, node_id=node.id, address='52:54:00:00:00:09',
            local_link_connection={'switch_id': '02:00:00:00:01:01',
                                   'port_id': 'Gi1/0/9'},
            extra={'switchport': {'mode': 'access', 'native_vlan': 120}})
        with task_manager.acquire(self.context, node.uuid) as task:
            task.driver.network.configure_tenant_networks(task)
            self.assertEqual(120, self.lab.port('leaf-1', gi(9))['access_vlan'])
            changed = obj_utils.get_test_port(
                self.context, id=port.id, uuid=port.uuid, node_id=node.id,
                address=port.address,
                local_link_connection=port.local_link_connection,
                extra=port.extra)
            changed.obj_reset_changes()
            changed.extra = {'switchport': {'mode': 'access',
                                            'native_vlan': 121,
                                            'lag_name': '30'}}
            task.driver.network.port_changed(task, changed)
        running = self.lab.state('leaf-1')['running']
        self.assertEqual([gi(9)], running['lags']['Port-channel30']['members'])
        self.assertEqual(('access', 121),
                         (running['lags']['Port-channel30']['mode_l2'],
                          running['lags']['Port-channel30']['access_vlan']))
        self.assertEqual('update_lag', self.lab.requests()[-1]['what']['op'])
