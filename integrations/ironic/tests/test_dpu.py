"""The DPU path end to end through the ``mercury`` network interface.

Ironic's model: the server (``self.node``) holds the DPU as a child node
(``parent_node`` = the server, name ``dpu-1.dc1``) whose own port links to
the switch port the card is cabled to (leaf-1 Gi1/0/9); the server's SmartNIC
port links to the card (``hostname`` + ``port_id``). Mercury's configuration
names the same switch port as the card's ``uplink``, so one ``plug_port`` /
``unplug_port`` per SmartNIC port and lifecycle step programs both hops.

The switch is the simulator (its state file), the card a real ovsdb-server +
ovs-vswitchd (read with the test's own ovs-vsctl); both are checked after
every step, through Ironic's own DB test scaffolding, the real sshd and the
real Mercury binary.
"""

import os
import threading

import pytest

from ironic.common import exception
from ironic.common import states
from ironic.conductor import task_manager
from ironic.tests.unit.objects import utils as obj_utils

from test_network import LEAF1
from test_network import MercuryTestCase

#: The switch port the card is cabled to, as Ironic's LLDP would name it and
#: as the simulator names it.
UPLINK_SHORT = 'Gi1/0/9'
UPLINK = 'GigabitEthernet1/0/9'
#: A VLAN the uplink carries for the card itself (its management network):
#: no tenant step may take it off (every assert_state checks it is still there).
CARD_VLAN = 150


class DpuTestCase(MercuryTestCase):

    @pytest.fixture(autouse=True)
    def _card(self, ovs):
        self.ovs = ovs

    def setUp(self):
        super().setUp()
        self.uplink_config('leaf-1', UPLINK_SHORT)
        self.lab.mercury('update-port', '--device', 'leaf-1', '--port',
                         UPLINK, '--mode', 'trunk', '--allowed-vlans',
                         str(CARD_VLAN), '--reason', 'cable the DPU')
        self.dpu = obj_utils.create_test_node(
            self.context, uuid='00000000-0000-4000-9000-00000000d001',
            name='dpu-1.dc1', parent_node=self.node.uuid,
            network_interface='noop', provision_state=states.MANAGEABLE)
        self.dpu_port = obj_utils.create_test_port(
            self.context, node_id=self.dpu.id, address='52:54:00:00:0d:01',
            uuid='00000000-0000-4000-9000-0000000d0001', pxe_enabled=False,
            local_link_connection={'switch_id': LEAF1,
                                   'port_id': UPLINK_SHORT})

    def uplink_config(self, device, port, extra=()):
        self.lab.card_extra = (['uplink = { device = "%s", port = "%s" }'
                                % (device, port)] if device else [])
        self.lab.card_extra += list(extra)
        self.lab.write_config()

    def smartnic_port(self, node, n, hostname='dpu-1.dc1'):
        return obj_utils.create_test_port(
            self.context, node_id=node.id, address='52:54:00:00:02:%02x' % n,
            uuid='00000000-0000-4000-8000-0000000002%02d' % n,
            is_smartnic=True, pxe_enabled=True,
            local_link_connection={'hostname': hostname,
                                   'port_id': 'pf0vf%d' % n})

    def acquire_node(self, node):
        return task_manager.acquire(self.context, node.uuid)

    def uplink(self):
        """The switch port facing the card: (mode, allowed VLANs)."""
        p = self.lab.port('leaf-1', UPLINK)
        return p['mode'], sorted(p.get('allowed_vlans') or [])

    def assert_state(self, vlans, representors):
        """Both devices: the uplink's trunk, and each representor's tag and
        iface-id on the card (absent representors: not plugged)."""
        self.assertEqual(('trunk', sorted(vlans)), self.uplink())
        self.assertEqual(set(representors), self.ovs.ports())
        for rep, (tag, iface) in representors.items():
            self.assertEqual(tag, self.ovs.tag(rep), rep)
            ids = self.ovs.external_ids(rep)
            self.assertEqual(iface, ids['iface-id'], rep)
            self.assertEqual('mercury', ids['plugged-by'], rep)

    def hops(self):
        """Each two-hop Mercury request (one process: Ironic reuses its
        request id across calls) -> the (hop, device) of the started audit
        records it wrote."""
        out = {}
        for r in self.lab.requests():
            if r['what'].get('hop'):
                out.setdefault(r['who']['pid'], []).append(
                    (r['what']['hop'], r['what']['device']))
        return out


class DpuLifecycleTestCase(DpuTestCase):

    def test_two_servers_behind_one_card_through_deploy_attach_detach_and_teardown(self):
        server_a = self.node
        port_a = self.smartnic_port(server_a, 1)
        # Server B is behind the same card but does not hold it as a child
        # node: its port names the card by Mercury's device name.
        server_b = obj_utils.create_test_node(
            self.context, uuid='00000000-0000-4000-9000-00000000b002',
            network_interface='mercury', provision_state=states.DEPLOYING)
        port_b = self.smartnic_port(server_b, 2, hostname='dpu-1')
        self.assert_state([CARD_VLAN], {})

        with self.acquire_node(server_a) as task:
            net = task.driver.network
            net.validate(task)
            self.assertTrue(net.need_power_on(task))
            net.vif_attach(task, {'id': 'vlan-120', 'port_uuid': port_a.uuid})
            # Deploy: the provisioning network on both hops.
            net.add_provisioning_network(task)
            self.assert_state([100, CARD_VLAN], {
                'pf0vf1': (100, 'provisioning-%s' % port_a.uuid)})
            self.assertEqual(server_a.uuid,
                             self.ovs.external_ids('pf0vf1')['node-uuid'])
            net.remove_provisioning_network(task)
            self.assert_state([CARD_VLAN], {})
            # Tenant attach.
            net.configure_tenant_networks(task)
            self.assert_state([120, CARD_VLAN],
                              {'pf0vf1': (120, 'vlan-120')})
        server_a.refresh()
        server_a.provision_state = states.ACTIVE
        server_a.save()

        # The second server behind the same card, on the same tenant VLAN.
        with self.acquire_node(server_b) as task:
            net = task.driver.network
            net.validate(task)
            net.vif_attach(task, {'id': 'vlan-120', 'port_uuid': port_b.uuid})
            net.add_provisioning_network(task)
            self.assert_state([100, 120, CARD_VLAN], {
                'pf0vf1': (120, 'vlan-120'),
                'pf0vf2': (100, 'provisioning-%s' % port_b.uuid)})
            net.remove_provisioning_network(task)
            self.assert_state([120, CARD_VLAN],
                              {'pf0vf1': (120, 'vlan-120')})
            net.configure_tenant_networks(task)
            self.assert_state([120, CARD_VLAN], {
                'pf0vf1': (120, 'vlan-120'), 'pf0vf2': (120, 'vlan-120')})

        # Detach of the first server's VIF (active: applied at once): its
        # representor goes, the uplink keeps VLAN 120, which B still uses.
        with self.acquire_node(server_a) as task:
            task.driver.network.vif_detach(task, 'vlan-120')
            self.assert_state([120, CARD_VLAN],
                              {'pf0vf2': (120, 'vlan-120')})
            self.assertEqual([], task.driver.network.vif_list(task))

        # Tear-down of B, then cleaning and its removal on A.
        with self.acquire_node(server_b) as task:
            task.driver.network.unconfigure_tenant_networks(task)
            self.assert_state([CARD_VLAN], {})
        with self.acquire_node(server_a) as task:
            net = task.driver.network
            net.unconfigure_tenant_networks(task)
            self.assert_state([CARD_VLAN], {})
            net.add_cleaning_network(task)
            self.assert_state([110, CARD_VLAN], {
                'pf0vf1': (110, 'cleaning-%s' % port_a.uuid)})
            net.remove_cleaning_network(task)
            self.assert_state([CARD_VLAN], {})

        # Every plug and unplug was one Mercury request doing both hops (an
        # unplug whose VLAN another representor keeps skips the switch).
        hops = self.hops()
        started = [r for r in self.lab.requests()
                   if r['what']['op'] == 'plug_port']
        self.assertEqual(5, len(started), started)
        for r in started:
            self.assertEqual({('card', 'dpu-1'), ('uplink', 'leaf-1')},
                             set(hops[r['who']['pid']]), r)
        unplugs = [r for r in self.lab.requests()
                   if r['what']['op'] == 'unplug_port']
        self.assertEqual(5, len(unplugs), unplugs)
        # The detach of A: the card only (B keeps VLAN 120 on the uplink).
        detach = next(r for r in unplugs
                      if r['why']['node_uuid'] == server_a.uuid
                      and r['why']['lifecycle'] == 'tenant')
        self.assertEqual([('card', 'dpu-1')], hops[detach['who']['pid']])
        # Every other unplug took its VLAN off the uplink too, card first.
        for r in unplugs:
            if r is not detach:
                self.assertEqual([('card', 'dpu-1'), ('uplink', 'leaf-1')],
                                 hops[r['who']['pid']], r)

    def test_a_card_failure_leaves_the_switch_as_it_was(self):
        port = self.smartnic_port(self.node, 3)
        self.port(1, pxe_enabled=True)
        # ovs-vsctl fails on the card's write (a command that cannot succeed
        # appended to the transaction that sets the tag): after the switch
        # hop, as a card that goes wrong mid-plug would.
        wrapper = os.path.join(str(self.lab.dir), 'vsctl-fail')
        with open(wrapper, 'w') as f:
            f.write('#!/bin/sh\nfor a in "$@"; do case "$a" in tag=*) exec '
                    '%s "$@" -- set Port mercury-no-such-port tag=1;; esac; '
                    'done\nexec %s "$@"\n' % (self.ovs.vsctl_bin,
                                             self.ovs.vsctl_bin))
        os.chmod(wrapper, 0o755)
        self.uplink_config('leaf-1', UPLINK_SHORT,
                           ['ovs_vsctl = ["%s"]' % wrapper])
        before = self.lab.port('leaf-1', UPLINK)
        with self.acquire() as task:
            net = task.driver.network
            net.validate(task)
            e = self.assertRaises(exception.NetworkError,
                                  net.add_provisioning_network, task)
        self.assertIn('restored', str(e))
        # The uplink exactly as before, nothing on the card, and the node's
        # switch port back to idle (reset_to_idle_on_failure).
        self.assertEqual(before, self.lab.port('leaf-1', UPLINK))
        self.assertEqual(set(), self.ovs.ports())
        self.assertEqual(10, self.access_vlan(1))

    def test_a_representor_another_node_holds_is_refused_before_the_switch(self):
        self.smartnic_port(self.node, 4)
        other = obj_utils.create_test_node(
            self.context, uuid='00000000-0000-4000-9000-00000000c003',
            network_interface='mercury', provision_state=states.DEPLOYING)
        # A second node whose port names the same representor (a cabling
        # record copied by mistake).
        obj_utils.create_test_port(
            self.context, node_id=other.id, address='52:54:00:00:03:04',
            uuid='00000000-0000-4000-8000-000000000304', is_smartnic=True,
            pxe_enabled=True, local_link_connection={'hostname': 'dpu-1',
                                                     'port_id': 'pf0vf4'})
        with self.acquire() as task:
            task.driver.network.add_provisioning_network(task)
        self.assert_state([100, CARD_VLAN], {
            'pf0vf4': (100, 'provisioning-00000000-0000-4000-8000-000000000204')})
        sent = len(self.lab.requests())
        with self.acquire_node(other) as task:
            e = self.assertRaises(exception.NetworkError,
                                  task.driver.network.add_cleaning_network,
                                  task)
        self.assertIn('is plugged for node %s' % self.node.uuid, str(e))
        self.assertIn('nothing was sent to the switch leaf-1', str(e))
        # The switch never saw the request; the first node's representor
        # and VLAN are as they were.
        self.assertFalse([r for r in self.lab.requests()[sent:]
                          if r['what']['device'] == 'leaf-1'])
        self.assert_state([100, CARD_VLAN], {
            'pf0vf4': (100, 'provisioning-00000000-0000-4000-8000-000000000204')})


    def test_two_conductors_on_two_servers_behind_one_card_at_once(self):
        # Two servers' tenant steps at the same moment (two conductors): both
        # requests lock the card and the switch, in one order, so they queue
        # instead of deadlocking, and each adds its VLAN beside the other's.
        server_b = obj_utils.create_test_node(
            self.context, uuid='00000000-0000-4000-9000-00000000b002',
            network_interface='mercury', provision_state=states.DEPLOYING)
        port_a = self.smartnic_port(self.node, 1)
        port_b = self.smartnic_port(server_b, 2, hostname='dpu-1')
        tasks = []
        for node, port, vif in ((self.node, port_a, 'vlan-120'),
                                (server_b, port_b, 'vlan-130')):
            task = self.acquire_node(node).__enter__()
            task.driver.network.vif_attach(task, {'id': vif,
                                                  'port_uuid': port.uuid})
            tasks.append(task)
        try:
            for step in ('configure_tenant_networks',
                         'unconfigure_tenant_networks'):
                start = threading.Barrier(len(tasks))
                errors = []

                def run(task):
                    start.wait()
                    try:
                        getattr(task.driver.network, step)(task)
                    except Exception as e:  # noqa: BLE001 (reported below)
                        errors.append(e)

                threads = [threading.Thread(target=run, args=(t,))
                           for t in tasks]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join(timeout=120)
                self.assertFalse([t for t in threads if t.is_alive()], step)
                self.assertEqual([], errors, step)
                if step == 'configure_tenant_networks':
                    self.assert_state([120, 130, CARD_VLAN], {
                        'pf0vf1': (120, 'vlan-120'),
                        'pf0vf2': (130, 'vlan-130')})
                else:
                    self.assert_state([CARD_VLAN], {})
        finally:
            for task in tasks:
                task.__exit__(None, None, None)

    def test_a_network_vif_on_a_smartnic_port_is_checked_on_both_hops_at_attach(self):
        self.lab.write_config(extra='\n[networks.tenant-a]\nvlan = 120\n'
                                    '\n[networks.tenant-far]\nvlan = 199\n')
        port = self.smartnic_port(self.node, 1)
        before = self.lab.state('leaf-1')['running']
        with self.acquire() as task:
            net = task.driver.network
            # VLAN 199 is outside the conductor's allowed VLANs.
            e = self.assertRaises(exception.InvalidParameterValue,
                                  net.vif_attach, task,
                                  {'id': 'tenant-far', 'port_uuid': port.uuid})
            self.assertIn('199', str(e))
            net.vif_attach(task, {'id': 'tenant-a', 'port_uuid': port.uuid})
            self.assertEqual([{'id': 'tenant-a'}], net.vif_list(task))
            # Checked, not applied: neither device changed.
            self.assertEqual(before, self.lab.state('leaf-1')['running'])
            self.assertEqual(set(), self.ovs.ports())
            net.configure_tenant_networks(task)
            self.assert_state([120, CARD_VLAN],
                              {'pf0vf1': (120, 'tenant-a')})

    def _changed(self, port, **fields):
        """A copy of ``port`` as the API hands it to port_changed: the new
        values set, and only those marked changed."""
        changed = obj_utils.get_test_port(
            self.context, id=port.id, uuid=port.uuid, node_id=port.node_id,
            address=port.address, is_smartnic=True,
            local_link_connection=port.local_link_connection,
            extra=port.extra, internal_info=port.internal_info,
            pxe_enabled=port.pxe_enabled)
        changed.obj_reset_changes()
        for k, v in fields.items():
            setattr(changed, k, v)
        return changed

    def test_port_changed_on_a_smartnic_port_of_an_active_node(self):
        self.node.provision_state = states.ACTIVE
        self.node.save()
        port = self.smartnic_port(self.node, 1)
        with self.acquire() as task:
            net = task.driver.network
            net.vif_attach(task, {'id': 'vlan-120', 'port_uuid': port.uuid})
            self.assert_state([120, CARD_VLAN],
                              {'pf0vf1': (120, 'vlan-120')})
            port = [p for p in task.ports if p.uuid == port.uuid][0]
            # A label: nothing sent.
            sent = len(self.lab.requests())
            net.port_changed(task, self._changed(
                port, extra={'label': 'rack-7'}))
            self.assertEqual(sent, len(self.lab.requests()))
            # A new MAC: the representor re-plugged in place (attached-mac),
            # never unplugged; the switch read, not changed.
            net.port_changed(task, self._changed(
                port, address='52:54:00:00:02:99'))
            self.assert_state([120, CARD_VLAN],
                              {'pf0vf1': (120, 'vlan-120')})
            self.assertEqual('52:54:00:00:02:99',
                             self.ovs.external_ids('pf0vf1')['attached-mac'])
            self.assertFalse([r for r in self.lab.requests()[sent:]
                              if r['what']['op'] == 'unplug_port'])
        # Another representor (the VF moved): the old one unplugged, the new
        # one plugged with the VIF, the uplink still carrying VLAN 120.
        port.refresh()
        with self.acquire() as task:
            net = task.driver.network
            port = [p for p in task.ports if p.uuid == port.uuid][0]
            net.port_changed(task, self._changed(
                port, local_link_connection={'hostname': 'dpu-1.dc1',
                                             'port_id': 'pf0vf5'}))
            self.assert_state([120, CARD_VLAN],
                              {'pf0vf5': (120, 'vlan-120')})


class DpuValidationTestCase(DpuTestCase):

    def test_the_child_nodes_link_must_be_the_cards_uplink(self):
        self.smartnic_port(self.node, 5)
        self.uplink_config('leaf-1', 'GigabitEthernet1/0/8')
        with self.acquire() as task:
            e = self.assertRaises(exception.InvalidParameterValue,
                                  task.driver.network.validate, task)
        self.assertIn('DPU child node %s says card dpu-1.dc1 is cabled to '
                      '%s %s' % (self.dpu.uuid, LEAF1, UPLINK_SHORT), str(e))
        self.assertIn('its uplink is leaf-1 GigabitEthernet1/0/8', str(e))
        # Abbreviated or not, the same port is the same port.
        self.uplink_config('leaf-1', UPLINK)
        with self.acquire() as task:
            task.driver.network.validate(task)

    def test_a_card_without_an_uplink_behind_a_cabled_child_node_fails_validation(self):
        self.smartnic_port(self.node, 6)
        self.uplink_config(None, None)
        with self.acquire() as task:
            e = self.assertRaises(exception.InvalidParameterValue,
                                  task.driver.network.validate, task)
        self.assertIn('names no uplink for dpu-1', str(e))
        self.assertIn('[devices.dpu-1]', str(e))

    def test_a_hostname_that_is_no_child_node_uses_the_card_directly(self):
        # The child node is named otherwise: the link names the card itself.
        self.dpu.name = 'some-other-card'
        self.dpu.save()
        self.smartnic_port(self.node, 7)
        self.uplink_config('leaf-1', 'GigabitEthernet1/0/8')
        with self.acquire() as task:
            task.driver.network.validate(task)

    def test_the_dpu_child_nodes_own_steps_leave_its_uplink_alone(self):
        # A DPU child node left on the mercury interface: cleaning it must not
        # turn the card's uplink (a trunk other servers use) into an access
        # port on the cleaning VLAN.
        self.smartnic_port(self.node, 8)
        self.dpu.network_interface = 'mercury'
        self.dpu.save()
        before = self.lab.port('leaf-1', UPLINK)
        sent = len(self.lab.requests())
        with self.acquire_node(self.dpu) as task:
            task.driver.network.add_cleaning_network(task)
            task.driver.network.remove_cleaning_network(task)
        self.assertEqual(before, self.lab.port('leaf-1', UPLINK))
        self.assertEqual(sent, len(self.lab.requests()))
        # A child node no SmartNIC port names is an ordinary node.
        self.dpu.name = 'not-a-card'
        self.dpu.save()
        with self.acquire_node(self.dpu) as task:
            task.driver.network.add_cleaning_network(task)
        self.assertEqual(('access', 110),
                         (self.lab.port('leaf-1', UPLINK)['mode'],
                          self.lab.port('leaf-1', UPLINK)['access_vlan']))
