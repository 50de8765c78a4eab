"""The ``mercury`` network interface, run by Ironic's own test scaffolding
(sqlite DB test base, object utils, task_manager.acquire) against the real
Mercury binary behind a real sshd, driving simulated switches.

Assertions are on the switches' state (``mercury-sim show``) and Mercury's
audit log, not on what the interface meant to send.
"""

import fcntl
import threading
import time
from unittest import mock

import pytest
from oslo_config import cfg

from ironic.common import exception
from ironic.common import states
from ironic.conductor import task_manager
from ironic.tests.unit.db import base as db_base
from ironic.tests.unit.objects import utils as obj_utils

from mercury_ironic import network as mercury_network

CONF = cfg.CONF

LEAF1 = '02:00:00:00:01:01'
LEAF2 = '02:00:00:00:01:02'


def gi(n):
    return 'GigabitEthernet1/0/%d' % n


class MercuryTestCase(db_base.DbTestCase):
    # The interface runs the ssh client: let it.
    block_execute = False

    def _clear_attrs(self):
        # Ironic's base clears instance attributes after each test; pytest
        # keeps the bound test method there and removes it itself.
        for key in [k for k in self.__dict__
                    if k[0] != '_' and not k.startswith('test')]:
            del self.__dict__[key]

    @pytest.fixture(autouse=True)
    def _servers(self, lab, sshd):
        self.lab = lab
        self.sshd = sshd

    def setUp(self):
        super().setUp()
        self.config(enabled_hardware_types=['fake-hardware'],
                    enabled_network_interfaces=['mercury', 'noop'])
        self.config(host='127.0.0.1', port=self.sshd.port,
                    user=self.sshd.user, key_file=str(self.sshd.key_file),
                    known_hosts_file=str(self.sshd.known_hosts),
                    retry_interval=0.2, group='mercury')
        self.config(idle_network='access/native_vlan=10',
                    provisioning_network='access/native_vlan=100',
                    cleaning_network='access/native_vlan=110',
                    group='ironic_networking')
        self.node = obj_utils.create_test_node(
            self.context, network_interface='mercury',
            provision_state=states.DEPLOYING)

    def port(self, n, switch=LEAF1, **kwargs):
        kwargs.setdefault('address', '52:54:00:00:00:%02x' % n)
        kwargs.setdefault('uuid', '00000000-0000-4000-8000-%012d' % n)
        return obj_utils.create_test_port(
            self.context, node_id=self.node.id,
            local_link_connection={'switch_id': switch,
                                   'port_id': 'Gi1/0/%d' % n},
            **kwargs)

    def acquire(self):
        return task_manager.acquire(self.context, self.node.uuid)

    def access_vlan(self, n, switch='leaf-1'):
        return self.lab.port(switch, gi(n))['access_vlan']


class LifecycleTestCase(MercuryTestCase):

    def test_interface_loads_through_its_entry_point(self):
        with self.acquire() as task:
            self.assertIsInstance(task.driver.network,
                                  mercury_network.MercuryNetwork)
            task.driver.network.validate(task)

    def test_deploy_flow_provisioning_then_vif_vlan_then_teardown(self):
        self.port(1, pxe_enabled=True)
        self.port(2, pxe_enabled=False)
        with self.acquire() as task:
            net = task.driver.network
            net.vif_attach(task, {'id': 'vlan-120'})
            self.assertEqual([{'id': 'vlan-120'}], net.vif_list(task))

            net.add_provisioning_network(task)
            self.assertEqual((100, 100), (self.access_vlan(1),
                                          self.access_vlan(2)))
            # Both ports of the node on leaf-1 went in one Mercury request,
            # and the audit record says who, why and for which node.
            started = self.lab.requests()
            self.assertEqual(1, len(started))
            rec = started[0]
            # The audit names ports canonically (the platform's full interface names).
            self.assertEqual(['GigabitEthernet1/0/1', 'GigabitEthernet1/0/2'],
                             rec['what']['ports'])
            self.assertEqual('conductor-a', rec['who']['caller'])
            self.assertEqual('127.0.0.1', rec['who']['ssh_client'])
            self.assertEqual(self.node.uuid, rec['why']['node_uuid'])
            self.assertEqual('provisioning', rec['why']['lifecycle'])
            self.assertIn(self.node.uuid, rec['why']['reason'])

            net.remove_provisioning_network(task)
            self.assertEqual((10, 10), (self.access_vlan(1),
                                        self.access_vlan(2)))

            net.configure_tenant_networks(task)
            # The VIF landed on the PXE port; the other port has no tenant
            # network and stays idle.
            self.assertEqual(120, self.access_vlan(1))
            self.assertEqual(10, self.access_vlan(2))
            tenant = self.lab.requests()[-1]
            self.assertEqual('tenant', tenant['why']['lifecycle'])
            self.assertEqual('00000000-0000-4000-8000-000000000001',
                             tenant['why']['port_uuid'])

            net.unconfigure_tenant_networks(task)
            self.assertEqual(10, self.access_vlan(1))

    def test_tenant_trunk_from_switchport_and_ports_on_two_switches(self):
        self.port(3, pxe_enabled=False,
                  extra={'switchport': {'mode': 'trunk',
                                        'native_vlan': 130,
                                        'allowed_vlans': [101, 102]}})
        self.port(4, switch=LEAF2, pxe_enabled=False,
                  extra={'switchport': {'mode': 'access',
                                        'native_vlan': 121}})
        with self.acquire() as task:
            task.driver.network.validate(task)
            task.driver.network.configure_tenant_networks(task)
        p3 = self.lab.port('leaf-1', gi(3))
        self.assertEqual(('trunk', 130), (p3['mode'], p3['native_vlan']))
        self.assertTrue({101, 102} <= set(p3['allowed_vlans']), p3)
        self.assertEqual(121, self.access_vlan(4, 'leaf-2'))
        self.assertEqual({'leaf-1', 'leaf-2'},
                         {r['what']['device'] for r in self.lab.requests()})

    def test_cleaning_network_from_driver_info_overrides_config(self):
        self.node.driver_info = {'cleaning_network': 'access/native_vlan=150'}
        self.node.save()
        self.port(5)
        with self.acquire() as task:
            task.driver.network.add_cleaning_network(task)
            self.assertEqual(150, self.access_vlan(5))
            task.driver.network.remove_cleaning_network(task)
            self.assertEqual(10, self.access_vlan(5))

    def test_lag_from_port_group(self):
        pg = obj_utils.create_test_portgroup(
            self.context, node_id=self.node.id, name='Port-channel10',
            address='52:54:00:00:01:00',
            extra={'lag': {'mode': 'trunk', 'aggregation_mode': 'lacp',
                           'native_vlan': 130, 'allowed_vlans': [101]}})
        for n in (7, 8):
            self.port(n, portgroup_id=pg.id, pxe_enabled=False,
                      extra={'switchport': {'mode': 'access',
                                            'native_vlan': 130}})
        with self.acquire() as task:
            task.driver.network.validate(task)
            task.driver.network.configure_tenant_networks(task)
            lag = self.lab.state('leaf-1')['running']['lags']['Port-channel10']
            self.assertEqual([gi(7), gi(8)], sorted(lag['members']))
            self.assertEqual('lacp', lag['mode'])
            task.driver.network.unconfigure_tenant_networks(task)
            self.assertNotIn('Port-channel10',
                             self.lab.state('leaf-1')['running']['lags'])


class VifTestCase(MercuryTestCase):

    def test_attach_list_detach(self):
        self.port(1)
        self.port(2, pxe_enabled=False)
        with self.acquire() as task:
            net = task.driver.network
            net.vif_attach(task, {'id': 'vlan-120'})
            net.vif_attach(task, {'id': '121'})
            self.assertEqual({'vlan-120', '121'},
                             {v['id'] for v in net.vif_list(task)})
            self.assertRaises(exception.VifAlreadyAttached, net.vif_attach,
                              task, {'id': '121'})
            self.assertRaises(exception.NoFreePhysicalPorts, net.vif_attach,
                              task, {'id': 'vlan-130'})
            # Neither a VLAN nor a network name.
            self.assertRaises(exception.InvalidParameterValue,
                              net.vif_attach, task, {'id': 'tenant a/b'})
            net.vif_detach(task, '121')
            self.assertEqual([{'id': 'vlan-120'}], net.vif_list(task))
            self.assertRaises(exception.VifNotAttached, net.vif_detach,
                              task, '121')
        # No switch was touched: the node is not active.
        self.assertEqual([], self.lab.requests())

    def test_attach_to_a_named_port(self):
        self.port(1)
        p2 = self.port(2, pxe_enabled=False)
        with self.acquire() as task:
            task.driver.network.vif_attach(task, {'id': 'vlan-120',
                                                  'port_uuid': p2.uuid})
            port = [p for p in task.ports if p.uuid == p2.uuid][0]
            self.assertEqual('vlan-120',
                             task.driver.network.get_current_vif(task, port))
            self.assertRaises(exception.VifAlreadyAttached,
                              task.driver.network.vif_attach, task,
                              {'id': '121', 'port_uuid': p2.uuid})

    def test_attach_and_detach_on_an_active_node_apply_at_once(self):
        self.node.provision_state = states.ACTIVE
        self.node.save()
        self.port(1)
        with self.acquire() as task:
            task.driver.network.vif_attach(task, {'id': 'vlan-130'})
            self.assertEqual(130, self.access_vlan(1))
            task.driver.network.vif_detach(task, 'vlan-130')
            self.assertEqual(10, self.access_vlan(1))

    def test_attach_refused_by_policy_is_not_recorded(self):
        self.node.provision_state = states.ACTIVE
        self.node.save()
        self.port(1)
        with self.acquire() as task:
            # 160 is in the device policy but not in conductor-a's range.
            e = self.assertRaises(exception.InvalidParameterValue,
                                  task.driver.network.vif_attach, task,
                                  {'id': 'vlan-160'})
            self.assertIn('callers.conductor-a.allowed_vlans', str(e))
            self.assertEqual([], task.driver.network.vif_list(task))


class FailureTestCase(MercuryTestCase):

    def test_failed_tenant_step_returns_every_port_to_idle(self):
        # leaf-2 rejects the tenant VLAN; leaf-1 was already configured.
        self.lab.sim_faults['leaf-2'] = ['--fault',
                                         'reject=switchport access vlan 121']
        self.lab.write_config()
        self.port(1, extra={'switchport': {'mode': 'access',
                                           'native_vlan': 120}})
        self.port(2, switch=LEAF2, pxe_enabled=False,
                  extra={'switchport': {'mode': 'access',
                                        'native_vlan': 121}})
        with self.acquire() as task:
            e = self.assertRaises(exception.NetworkError,
                                  task.driver.network.configure_tenant_networks,
                                  task)
        self.assertIn('Failed to configure the tenant network', str(e))
        self.assertIn('mercury rc 1 device_rejected', str(e))
        self.assertEqual(10, self.access_vlan(1))
        self.assertEqual(10, self.access_vlan(2, 'leaf-2'))

    def test_policy_denial_is_invalid_parameter_value(self):
        self.config(provisioning_network='access/native_vlan=300',
                    group='ironic_networking')
        self.port(1)
        with self.acquire() as task:
            e = self.assertRaises(exception.InvalidParameterValue,
                                  task.driver.network.add_provisioning_network,
                                  task)
        self.assertIn('denied by', str(e))
        self.assertNotEqual(300, self.access_vlan(1))

    def test_busy_device_is_retried(self):
        self.lab.write_config(lock_timeout=0.3)
        self.config(retries=8, group='mercury')
        self.port(1)
        lock_path = self.lab.dir / 'locks' / 'leaf-1.lock'
        lock_path.parent.mkdir(exist_ok=True)
        held = threading.Event()

        def hold():
            # Hold the device lock until Mercury has refused once (exit 75),
            # then let the retry through.
            with open(lock_path, 'a') as f:
                fcntl.flock(f, fcntl.LOCK_EX)
                held.set()
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline and not any(
                        r.get('how', {}).get('rc') == 75
                        for r in self.lab.audit()):
                    time.sleep(0.05)

        t = threading.Thread(target=hold)
        t.start()
        held.wait()
        with self.acquire() as task:
            task.driver.network.add_provisioning_network(task)
        t.join()
        self.assertEqual(100, self.access_vlan(1))
        refusals = [r for r in self.lab.audit()
                    if r.get('how', {}).get('rc') == 75]
        self.assertGreaterEqual(len(refusals), 1)

    def test_retries_are_bounded(self):
        self.lab.write_config(lock_timeout=0.2)
        self.config(retries=2, group='mercury')
        self.port(1)
        lock_path = self.lab.dir / 'locks' / 'leaf-1.lock'
        lock_path.parent.mkdir(exist_ok=True)
        with open(lock_path, 'a') as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            with self.acquire() as task:
                e = self.assertRaises(
                    exception.NetworkError,
                    task.driver.network.add_provisioning_network, task)
        self.assertIn('mercury rc 75 temporary', str(e))
        attempts = [r for r in self.lab.audit()
                    if r.get('how', {}).get('rc') == 75
                    and r['what']['op'] == 'update_port']
        self.assertEqual(3, len(attempts))

    def test_wrong_executor_host_key_is_refused(self):
        self.config(known_hosts_file=str(self.sshd.wrong_known_hosts),
                    group='mercury')
        self.port(1)
        with self.acquire() as task:
            e = self.assertRaises(
                exception.NetworkError,
                task.driver.network.add_provisioning_network, task)
        self.assertIn('cannot reach Mercury', str(e))
        self.assertEqual([], self.lab.audit())

    def test_invalid_switchport_fails_validation(self):
        self.port(1, extra={'switchport': {'mode': 'access',
                                           'native_vlan': 5000}})
        with self.acquire() as task:
            self.assertRaises(exception.InvalidParameterValue,
                              task.driver.network.validate, task)


class PortChangedTestCase(MercuryTestCase):

    def test_moving_a_port_on_an_active_node(self):
        self.node.provision_state = states.ACTIVE
        self.node.save()
        port = self.port(1, extra={'switchport': {'mode': 'access',
                                                  'native_vlan': 120}})
        with self.acquire() as task:
            task.driver.network.configure_tenant_networks(task)
            self.assertEqual(120, self.access_vlan(1))
            port = [p for p in task.ports if p.uuid == port.uuid][0]
            changed = obj_utils.get_test_port(
                self.context, id=port.id, uuid=port.uuid,
                node_id=self.node.id, address=port.address,
                local_link_connection={'switch_id': LEAF1,
                                       'port_id': 'Gi1/0/9'},
                extra=port.extra)
            changed.obj_reset_changes()
            changed.local_link_connection = {'switch_id': LEAF1,
                                             'port_id': 'Gi1/0/9'}
            task.driver.network.port_changed(task, changed)
        self.assertEqual(10, self.access_vlan(1))
        self.assertEqual(120, self.access_vlan(9))

    def _changed(self, port, **fields):
        """A copy of ``port`` as the API hands it to port_changed: the new
        values set, and only those marked changed."""
        changed = obj_utils.get_test_port(
            self.context, id=port.id, uuid=port.uuid, node_id=self.node.id,
            address=port.address,
            local_link_connection=port.local_link_connection,
            extra=port.extra, internal_info=port.internal_info,
            portgroup_id=port.portgroup_id, pxe_enabled=port.pxe_enabled)
        changed.obj_reset_changes()
        for k, v in fields.items():
            setattr(changed, k, v)
        return changed

    def test_label_in_extra_on_an_active_node_sends_nothing(self):
        # Issue 16 item 8: before, this reset the port to idle and applied
        # the tenant VLAN again (a tenant outage blip).
        self.node.provision_state = states.ACTIVE
        self.node.save()
        sp = {'switchport': {'mode': 'access', 'native_vlan': 120}}
        port = self.port(1, extra=dict(sp))
        with self.acquire() as task:
            task.driver.network.configure_tenant_networks(task)
            before = len(self.lab.requests())
            port = [p for p in task.ports if p.uuid == port.uuid][0]
            task.driver.network.port_changed(
                task, self._changed(port, extra=dict(sp, label='rack-7')))
            task.driver.network.port_changed(
                task, self._changed(port, address='52:54:00:00:00:99'))
        self.assertEqual(before, len(self.lab.requests()))
        self.assertEqual(120, self.access_vlan(1))

    def test_new_switchport_vlan_is_declared_without_a_reset(self):
        self.node.provision_state = states.ACTIVE
        self.node.save()
        port = self.port(1, extra={'switchport': {'mode': 'access',
                                                  'native_vlan': 120}})
        with self.acquire() as task:
            task.driver.network.configure_tenant_networks(task)
            before = len(self.lab.requests())
            port = [p for p in task.ports if p.uuid == port.uuid][0]
            task.driver.network.port_changed(task, self._changed(
                port, extra={'switchport': {'mode': 'access',
                                            'native_vlan': 121}}))
        ops = [r['what']['op'] for r in self.lab.requests()[before:]]
        self.assertEqual(['update_port'], ops)
        self.assertEqual(121, self.access_vlan(1))

    def test_switchport_removed_returns_the_port_to_idle(self):
        self.node.provision_state = states.ACTIVE
        self.node.save()
        port = self.port(1, extra={'switchport': {'mode': 'access',
                                                  'native_vlan': 120}})
        with self.acquire() as task:
            task.driver.network.configure_tenant_networks(task)
            port = [p for p in task.ports if p.uuid == port.uuid][0]
            task.driver.network.port_changed(task,
                                             self._changed(port, extra={}))
        self.assertEqual(10, self.access_vlan(1))

    def test_portgroup_changed_acts_only_when_the_lag_changes(self):
        self.node.provision_state = states.ACTIVE
        self.node.save()
        lag = {'mode': 'trunk', 'aggregation_mode': 'lacp',
               'native_vlan': 130, 'allowed_vlans': [101]}
        pg = obj_utils.create_test_portgroup(
            self.context, node_id=self.node.id, name='Port-channel10',
            address='52:54:00:00:01:00', extra={'lag': dict(lag)})
        for n in (7, 8):
            self.port(n, portgroup_id=pg.id, pxe_enabled=False)
        with self.acquire() as task:
            net = task.driver.network
            net.configure_tenant_networks(task)
            before = len(self.lab.requests())
            pg = [p for p in task.portgroups if p.uuid == pg.uuid][0]

            def changed(**fields):
                c = obj_utils.get_test_portgroup(
                    self.context, id=pg.id, uuid=pg.uuid,
                    node_id=self.node.id, name=pg.name, address=pg.address,
                    extra=pg.extra, internal_info=pg.internal_info)
                c.obj_reset_changes()
                for k, v in fields.items():
                    setattr(c, k, v)
                return c

            net.portgroup_changed(task, changed(extra={'lag': dict(lag),
                                                       'label': 'x'}))
            self.assertEqual(before, len(self.lab.requests()))
            net.portgroup_changed(task, changed(extra={'lag': dict(
                lag, native_vlan=131)}))
        ops = [r['what']['op'] for r in self.lab.requests()[before:]]
        self.assertEqual(['update_lag'], ops)
        lag_state = self.lab.state('leaf-1')['running']['lags'][
            'Port-channel10']
        self.assertEqual(131, lag_state['native_vlan'])


class MoreVifTestCase(MercuryTestCase):

    def test_vif_on_a_port_group_configures_the_lag(self):
        # Every port is in a port group: before, NoFreePhysicalPorts.
        pg = obj_utils.create_test_portgroup(
            self.context, node_id=self.node.id, name='Port-channel11',
            address='52:54:00:00:01:00', mode='802.3ad')
        for n in (5, 6):
            self.port(n, portgroup_id=pg.id, pxe_enabled=(n == 5))
        with self.acquire() as task:
            net = task.driver.network
            net.vif_attach(task, {'id': 'vlan-120'})
            pg = [p for p in task.portgroups if p.uuid == pg.uuid][0]
            self.assertEqual('vlan-120', net.get_current_vif(task, pg))
            net.configure_tenant_networks(task)
            lag = self.lab.state('leaf-1')['running']['lags'][
                'Port-channel11']
            self.assertEqual([gi(5), gi(6)], sorted(lag['members']))
            self.assertEqual(('lacp', 'access', 120),
                             (lag['mode'], lag['mode_l2'],
                              lag['access_vlan']))
            net.unconfigure_tenant_networks(task)
            self.assertNotIn('Port-channel11',
                             self.lab.state('leaf-1')['running']['lags'])

    def test_vif_naming_a_network_of_mercurys_config(self):
        self.lab.write_config(extra='\n[networks.tenant-a]\nvlan = 120\n')
        self.port(1)
        self.port(2, pxe_enabled=False)
        before = self.lab.state('leaf-1')['running']
        with self.acquire() as task:
            net = task.driver.network
            net.vif_attach(task, {'id': 'tenant-a'})
            # A name Mercury does not know fails the attach, not the deploy,
            # and is not recorded.
            e = self.assertRaises(exception.InvalidParameterValue,
                                  net.vif_attach, task, {'id': 'tenant-z'})
            self.assertIn('unknown network "tenant-z"', str(e))
            self.assertEqual([{'id': 'tenant-a'}], net.vif_list(task))
            # The checks (tenant-a's too) read the switch and changed
            # nothing.
            self.assertEqual(before, self.lab.state('leaf-1')['running'])
            net.configure_tenant_networks(task)
        self.assertEqual(120, self.access_vlan(1))
        rec = self.lab.requests()[-1]
        self.assertEqual('tenant', rec['why']['lifecycle'])

    def test_vif_naming_a_network_on_a_port_group_is_checked_at_attach(self):
        self.lab.write_config(extra='\n[networks.tenant-a]\nvlan = 120\n')
        pg = obj_utils.create_test_portgroup(
            self.context, node_id=self.node.id, name='Port-channel12',
            address='52:54:00:00:01:00', mode='802.3ad')
        for n in (5, 6):
            self.port(n, portgroup_id=pg.id, pxe_enabled=(n == 5))
        before = self.lab.state('leaf-1')['running']
        with self.acquire() as task:
            net = task.driver.network
            e = self.assertRaises(exception.InvalidParameterValue,
                                  net.vif_attach, task, {'id': 'tenant-z'})
            self.assertIn('unknown network "tenant-z"', str(e))
            net.vif_attach(task, {'id': 'tenant-a'})
            self.assertEqual(before, self.lab.state('leaf-1')['running'])
            net.configure_tenant_networks(task)
            lag = self.lab.state('leaf-1')['running']['lags'][
                'Port-channel12']
            self.assertEqual(120, lag['access_vlan'])

    def test_vif_naming_a_network_the_policy_refuses_fails_the_attach(self):
        # VLAN 199 is the device's to use, not this conductor's (100-150).
        self.lab.write_config(extra='\n[networks.tenant-far]\nvlan = 199\n')
        self.port(1)
        before = self.lab.state('leaf-1')['running']
        with self.acquire() as task:
            net = task.driver.network
            e = self.assertRaises(exception.InvalidParameterValue,
                                  net.vif_attach, task, {'id': 'tenant-far'})
            self.assertIn('callers.conductor-a.allowed_vlans', str(e))
            self.assertEqual([], net.vif_list(task))
        self.assertEqual(before, self.lab.state('leaf-1')['running'])

    def test_get_current_vif_reports_the_step_network(self):
        port = self.port(1)
        with self.acquire() as task:
            net = task.driver.network
            net.vif_attach(task, {'id': 'vlan-120'})
            p = [x for x in task.ports if x.uuid == port.uuid][0]
            net.add_cleaning_network(task)
            self.assertEqual('vlan-110', net.get_current_vif(task, p))
            net.remove_cleaning_network(task)
            net.add_provisioning_network(task)
            self.assertEqual('vlan-100', net.get_current_vif(task, p))
            net.remove_provisioning_network(task)
            self.assertEqual('vlan-120', net.get_current_vif(task, p))

    def test_ports_without_a_link_warn(self):
        obj_utils.create_test_port(self.context, node_id=self.node.id,
                                   address='52:54:00:00:00:42',
                                   uuid='00000000-0000-4000-8000-000000000042',
                                   local_link_connection={})
        with mock.patch.object(mercury_network.LOG, 'warning') as warn:
            with self.acquire() as task:
                task.driver.network.validate(task)
                task.driver.network.add_provisioning_network(task)
        texts = [c.args[0] % c.args[1] for c in warn.call_args_list]
        self.assertEqual(2, len(texts), texts)
        self.assertTrue(all('00000000-0000-4000-8000-000000000042' in t
                            for t in texts), texts)


class SmartNicTestCase(MercuryTestCase):
    """SmartNIC ports (is_smartnic, hostname + port_id) through the mercury
    interface, over SSH to Mercury, to a real ovsdb-server: the representor
    is plugged and unplugged through a node's deploy and tear-down."""

    @pytest.fixture(autouse=True)
    def _card(self, ovs):
        self.ovs = ovs

    def smartnic_port(self, n, hostname='dpu-1.dc1'):
        return obj_utils.create_test_port(
            self.context, node_id=self.node.id,
            address='52:54:00:00:02:%02x' % n,
            uuid='00000000-0000-4000-8000-0000000002%02d' % n,
            is_smartnic=True, pxe_enabled=True,
            local_link_connection={'hostname': hostname,
                                   'port_id': 'pf0vf%d' % n})

    def test_deploy_and_teardown_plug_and_unplug_the_representor(self):
        port = self.smartnic_port(3)
        self.port(1, pxe_enabled=False,
                  extra={'switchport': {'mode': 'access',
                                        'native_vlan': 121}})
        with self.acquire() as task:
            net = task.driver.network
            self.assertTrue(net.need_power_on(task))
            net.validate(task)
            net.vif_attach(task, {'id': 'vlan-120', 'port_uuid': port.uuid})

            net.add_provisioning_network(task)
            self.assertIn('pf0vf3', self.ovs.ports())
            self.assertEqual(100, self.ovs.tag('pf0vf3'))
            ids = self.ovs.external_ids('pf0vf3')
            self.assertEqual('provisioning-%s' % port.uuid, ids['iface-id'])
            self.assertEqual(self.node.uuid, ids['node-uuid'])
            self.assertEqual(port.address, ids['attached-mac'])
            # The switch port of the node went on the provisioning VLAN too.
            self.assertEqual(100, self.access_vlan(1))

            net.remove_provisioning_network(task)
            self.assertNotIn('pf0vf3', self.ovs.ports())

            net.configure_tenant_networks(task)
            self.assertEqual(120, self.ovs.tag('pf0vf3'))
            ids = self.ovs.external_ids('pf0vf3')
            self.assertEqual(('vlan-120', port.address, self.node.uuid),
                             (ids['iface-id'], ids['attached-mac'],
                              ids['node-uuid']))
            self.assertEqual('mercury', ids.get('plugged-by'))
            self.assertEqual(121, self.access_vlan(1))

            net.unconfigure_tenant_networks(task)
            self.assertNotIn('pf0vf3', self.ovs.ports())
            self.assertEqual(10, self.access_vlan(1))
        started = self.lab.requests()
        self.assertEqual({'dpu-1', 'leaf-1'},
                         {r['what']['device'] for r in started})
        plugs = [r for r in started if r['what']['op'] == 'plug_port']
        self.assertEqual(['provisioning', 'tenant'],
                         [r['why']['lifecycle'] for r in plugs])

    def test_unknown_card_fails_validation(self):
        self.smartnic_port(4, hostname='dpu-9')
        with self.acquire() as task:
            e = self.assertRaises(exception.InvalidParameterValue,
                                  task.driver.network.validate, task)
        self.assertIn('card dpu-9 is not usable through Mercury', str(e))

    def test_need_power_on_is_false_without_smartnic_ports(self):
        self.port(1)
        with self.acquire() as task:
            self.assertFalse(task.driver.network.need_power_on(task))
