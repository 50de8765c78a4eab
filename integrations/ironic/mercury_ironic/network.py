"""The ``mercury`` network interface.

At each lifecycle step the node's switch ports are put on the step's network
by Mercury, on the executor host, over SSH (``mercury_ironic.client``).

Where the VLANs come from is the same as for Ironic's own
``ironic-networking`` interface, so the two are configured alike:

* idle, inspection, cleaning, provisioning, rescuing and servicing networks:
  the node's ``driver_info['<type>_network']``, else
  ``[ironic_networking]<type>_network``
  (``{access|trunk|hybrid}/native_vlan=N[/allowed_vlans=a,b-c]``), else the
  port's ``extra['switchport']``;
* the tenant network: a VIF attached to the port whose id names a VLAN
  (``vlan-120`` or ``120``, the Mercury proposal's flow), else the port's
  ``extra['switchport']``;
* LAGs: a port group with ``extra['lag']`` (``mode``, ``aggregation_mode``,
  ``native_vlan``, ``allowed_vlans``) whose member ports share one switch
  becomes a Mercury ``update_lag`` at the tenant step and ``delete_lag`` when
  the tenant network is removed.

Requests for one node's ports on the same switch go in one Mercury request
(one device session). Every request carries a reason, the node and port
UUIDs, the lifecycle step and the conductor's request id, for Mercury's
audit log. Failures raise ``InvalidParameterValue`` (Mercury exit 64, 65,
77: bad data or policy) or ``NetworkError`` (anything else) with Mercury's
message; a failed configure step first returns the node's ports to idle.
"""

import collections
import re

import jsonschema
from oslo_config import cfg
from oslo_log import log

from ironic.common import exception
from ironic.common import network as ironic_network
from ironic.common import states
from ironic.drivers import base
from ironic.drivers.modules.network import ironic_networking_schemas as schemas
from ironic.drivers.modules.network.switchport_config import SwitchPortConfig

from mercury_ironic import client as mercury_client

LOG = log.getLogger(__name__)
CONF = cfg.CONF

#: Where a VIF is recorded on a port, as Ironic's other interfaces do.
VIF_KEY = 'tenant_vif_port_id'

#: VIF ids that name a VLAN: ``vlan-120``, ``vlan120``, ``120``.
VLAN_VIF = re.compile(r'^(?:vlan-?)?(\d{1,4})$', re.IGNORECASE)

#: The keys of a local_link_connection that Mercury understands.
LINK_KEYS = ('switch_id', 'switch_info', 'port_id', 'hostname')

TENANT = ironic_network.TENANT_NETWORK
IDLE = ironic_network.IDLE_NETWORK


def vif_vlan(vif_id):
    """The VLAN a VIF id names, or None."""
    m = VLAN_VIF.match(str(vif_id or ''))
    if not m:
        return None
    vlan = int(m.group(1))
    return vlan if 1 <= vlan <= 4094 else None


class MercuryNetwork(base.NetworkInterface):
    """Switch ports configured by Mercury, over SSH to the executor host."""

    def __init__(self):
        super().__init__()
        self.client = mercury_client.MercuryClient()

    # -- configuration ----------------------------------------------------

    def get_properties(self):
        return {}

    @staticmethod
    def _network_config(task, network_type):
        """The network a lifecycle step uses, from driver_info or config."""
        value = task.node.driver_info.get('%s_network' % network_type)
        if not value:
            value = getattr(CONF.ironic_networking,
                            '%s_network' % network_type, '')
        if not value:
            return None
        return SwitchPortConfig.from_string(value, network_type)

    @staticmethod
    def _switchport(port):
        sp = (port.extra or {}).get('switchport')
        return SwitchPortConfig.from_switchport(sp) if sp else None

    def _port_config(self, task, port, network_type, global_config):
        """The L2 config a port gets at a step, or None to leave it alone."""
        if network_type == TENANT:
            vlan = vif_vlan((port.internal_info or {}).get(VIF_KEY))
            if vlan:
                return SwitchPortConfig(mode='access', native_vlan=vlan)
            return self._switchport(port)
        if global_config is not None and global_config.is_valid:
            return global_config
        return self._switchport(port)

    @staticmethod
    def _link(port):
        link = port.local_link_connection or {}
        return {k: link[k] for k in LINK_KEYS if link.get(k)}

    @staticmethod
    def _device_key(link):
        return (link.get('switch_info') or link.get('hostname') or '',
                link.get('switch_id') or '')

    # -- requests -----------------------------------------------------------

    def _reason(self, task, action, network_type):
        fields = {'action': action, 'network': network_type,
                  'node': task.node.uuid, 'node_name': task.node.name or '',
                  'request_id': getattr(task.context, 'request_id', '') or ''}
        try:
            return CONF.mercury.reason_format.format(**fields)
        except (KeyError, IndexError, ValueError):
            return 'ironic: {action} {network} network for node {node}'.format(
                **fields)

    def _base_request(self, task, op, link, action, network_type):
        req = {'op': op,
               'local_link_connection': {k: v for k, v in link.items()
                                         if k != 'port_id'},
               'reason': self._reason(task, action, network_type),
               'node_uuid': task.node.uuid,
               'lifecycle': network_type}
        request_id = getattr(task.context, 'request_id', None)
        if request_id:
            req['request_id'] = request_id
        return req

    def _batches(self, task, network_type, ports=None):
        """Groups (port, config, link) by switch, skipping ports Mercury
        cannot or need not touch. LAG members at the tenant step are left
        to the LAG."""
        global_config = (None if network_type == TENANT
                         else self._network_config(task, network_type))
        lag_members = (self._lag_member_ids(task) if network_type == TENANT
                       else set())
        batches = collections.OrderedDict()
        for port in (task.ports if ports is None else ports):
            link = self._link(port)
            if not link.get('port_id') or not (link.get('switch_id')
                                               or link.get('switch_info')):
                LOG.debug('Port %s has no usable local_link_connection; '
                          'skipped for the %s network', port.uuid,
                          network_type)
                continue
            if port.id in lag_members:
                continue
            config = self._port_config(task, port, network_type,
                                       global_config)
            if config is None or not config.is_valid:
                LOG.debug('Port %s has no %s network; skipped', port.uuid,
                          network_type)
                continue
            batches.setdefault(self._device_key(link), []).append(
                (port, config, link))
        return list(batches.values())

    def _idle_vlan(self, task):
        idle = self._network_config(task, IDLE)
        return idle.native_vlan if idle else None

    def _update_request(self, task, batch, network_type):
        idle_vlan = self._idle_vlan(task)
        req = self._base_request(task, 'update_port', batch[0][2],
                                 'configure', network_type)
        items = []
        for port, config, link in batch:
            item = {'port': link['port_id'], 'mode': config.mode,
                    'description': 'Ironic Port %s' % port.uuid}
            if config.native_vlan is not None:
                item['native_vlan'] = config.native_vlan
            if config.allowed_vlans and config.mode != 'access':
                item['allowed_vlans'] = sorted(config.allowed_vlans)
            if idle_vlan is not None:
                item['default_vlan'] = idle_vlan
            items.append(item)
        req['ports'] = items
        if len(batch) == 1:
            req['port_uuid'] = batch[0][0].uuid
        return req

    def _reset_request(self, task, batch, network_type):
        idle_vlan = self._idle_vlan(task)
        req = self._base_request(task, 'reset_port', batch[0][2],
                                 'unconfigure', network_type)
        items = []
        for port, config, link in batch:
            item = {'port': link['port_id']}
            if config.native_vlan is not None:
                item['native_vlan'] = config.native_vlan
            if config.allowed_vlans and config.mode != 'access':
                item['allowed_vlans'] = sorted(config.allowed_vlans)
            if idle_vlan is not None:
                item['default_vlan'] = idle_vlan
            items.append(item)
        req['ports'] = items
        if len(batch) == 1:
            req['port_uuid'] = batch[0][0].uuid
        return req

    def _send(self, request):
        try:
            return self.client.call(request)
        except mercury_client.MercuryError as e:
            if e.invalid:
                raise exception.InvalidParameterValue(str(e))
            raise exception.NetworkError(str(e))

    def _describe(self, batch):
        link = batch[0][2]
        return '%s (%s)' % (link.get('switch_info') or link.get('switch_id'),
                            ', '.join(b[2]['port_id'] for b in batch))

    def _configure(self, task, network_type, ports=None):
        """Puts ports on a network, one Mercury request per switch. On failure
        the node's ports go back to idle first (reset_to_idle_on_failure)."""
        LOG.info('Mercury: configuring the %s network for node %s',
                 network_type, task.node.uuid)
        done = []
        try:
            for batch in self._batches(task, network_type, ports):
                self._send(self._update_request(task, batch, network_type))
                done.append(batch)
            if network_type == TENANT and ports is None:
                self._configure_lags(task)
        except (exception.InvalidParameterValue,
                exception.NetworkError) as e:
            msg = ('Failed to configure the %(net)s network for node '
                   '%(node)s: %(err)s'
                   % {'net': network_type, 'node': task.node.uuid, 'err': e})
            LOG.error(msg)
            if CONF.mercury.reset_to_idle_on_failure:
                self._back_to_idle(task, network_type, ports)
            raise type(e)(msg)

    def _back_to_idle(self, task, network_type, ports=None):
        try:
            self._unconfigure(task, network_type, ports)
        except exception.IronicException as e:
            LOG.error('Could not return the ports of node %s to idle after '
                      'a failure: %s', task.node.uuid, e)

    def _unconfigure(self, task, network_type, ports=None):
        """Returns ports to idle, one Mercury request per switch; tries every
        switch, then raises NetworkError naming each failure."""
        LOG.info('Mercury: removing the %s network from node %s',
                 network_type, task.node.uuid)
        errors = []
        if network_type == TENANT and ports is None:
            errors.extend(self._delete_lags(task))
        for batch in self._batches(task, network_type, ports):
            try:
                self._send(self._reset_request(task, batch, network_type))
            except (exception.InvalidParameterValue,
                    exception.NetworkError) as e:
                errors.append('%s: %s' % (self._describe(batch), e))
        if errors:
            raise exception.NetworkError(
                'Failed to remove the %(net)s network from node %(node)s: '
                '%(errs)s' % {'net': network_type, 'node': task.node.uuid,
                              'errs': '; '.join(errors)})

    # -- LAGs -------------------------------------------------------------

    def _lag_groups(self, task):
        """(portgroup, lag config, members, link) for port groups with a
        valid ``extra['lag']`` whose members share one switch."""
        out = []
        for pg in task.portgroups:
            lag = (pg.extra or {}).get('lag')
            if not lag:
                continue
            members = [p for p in task.ports if p.portgroup_id == pg.id]
            links = [self._link(p) for p in members]
            keys = {self._device_key(link) for link in links}
            if not members or len(keys) != 1 or not all(
                    link.get('port_id') for link in links):
                LOG.warning('Port group %s: LAG members must all have a '
                            'local_link_connection on one switch; not '
                            'configured as a LAG', pg.uuid)
                continue
            out.append((pg, lag, members, links[0]))
        return out

    def _lag_member_ids(self, task):
        return {p.id for _, _, members, _ in self._lag_groups(task)
                for p in members}

    @staticmethod
    def _lag_name(pg):
        return pg.name or 'lag-%s' % pg.uuid[:8]

    def _configure_lags(self, task):
        idle_vlan = self._idle_vlan(task)
        for pg, lag, members, link in self._lag_groups(task):
            req = self._base_request(task, 'update_lag', link, 'configure',
                                     TENANT)
            req.update({'lag': self._lag_name(pg),
                        'members': [self._link(p)['port_id']
                                    for p in members],
                        'aggregation_mode': lag.get('aggregation_mode',
                                                    'lacp'),
                        'mode': lag['mode'],
                        'description': 'Ironic PortGroup %s' % pg.uuid})
            if lag.get('native_vlan') is not None:
                req['native_vlan'] = lag['native_vlan']
            if lag.get('allowed_vlans') and lag['mode'] != 'access':
                req['allowed_vlans'] = sorted(lag['allowed_vlans'])
            if idle_vlan is not None:
                req['default_vlan'] = idle_vlan
            self._send(req)

    def _delete_lags(self, task):
        errors = []
        for pg, lag, members, link in self._lag_groups(task):
            req = self._base_request(task, 'delete_lag', link, 'unconfigure',
                                     TENANT)
            req.update({'lag': self._lag_name(pg),
                        'members': [self._link(p)['port_id']
                                    for p in members]})
            try:
                self._send(req)
            except (exception.InvalidParameterValue,
                    exception.NetworkError) as e:
                errors.append('LAG %s: %s' % (self._lag_name(pg), e))
        return errors

    # -- validation -------------------------------------------------------

    def validate(self, task):
        """Checks port switchport and port group LAG settings, the network
        strings, attached VIFs, and that the executor host is configured."""
        if not CONF.mercury.host:
            raise exception.InvalidParameterValue(
                '[mercury]host is not configured: the mercury network '
                'interface needs the executor host')
        for network_type in (IDLE, ironic_network.INSPECTION_NETWORK,
                             ironic_network.CLEANING_NETWORK,
                             ironic_network.PROVISIONING_NETWORK,
                             ironic_network.RESCUING_NETWORK,
                             ironic_network.SERVICING_NETWORK):
            self._network_config(task, network_type)
        for port in task.ports:
            sp = (port.extra or {}).get('switchport')
            if sp:
                try:
                    jsonschema.validate(sp, schemas.SWITCHPORT_SCHEMA)
                except jsonschema.ValidationError as e:
                    raise exception.InvalidParameterValue(
                        'Invalid switchport configuration for port %s: %s'
                        % (port.uuid, e.message))
                if port.pxe_enabled and sp.get('mode') != 'access':
                    raise exception.InvalidParameterValue(
                        'Port %s is PXE-enabled, so its switchport mode must '
                        'be access' % port.uuid)
            vif = (port.internal_info or {}).get(VIF_KEY)
            if vif and not vif_vlan(vif):
                raise exception.InvalidParameterValue(
                    'VIF %s on port %s does not name a VLAN' % (vif,
                                                               port.uuid))
        for pg in task.portgroups:
            lag = (pg.extra or {}).get('lag')
            if lag:
                try:
                    jsonschema.validate(lag, schemas.LAG_SCHEMA)
                except jsonschema.ValidationError as e:
                    raise exception.InvalidParameterValue(
                        'Invalid LAG configuration for port group %s: %s'
                        % (pg.uuid, e.message))

    def validate_rescue(self, task):
        self._network_config(task, ironic_network.RESCUING_NETWORK)

    def validate_inspection(self, task):
        self._network_config(task, ironic_network.INSPECTION_NETWORK)

    # -- lifecycle steps ----------------------------------------------------

    def add_provisioning_network(self, task):
        self._configure(task, ironic_network.PROVISIONING_NETWORK)

    def remove_provisioning_network(self, task):
        self._unconfigure(task, ironic_network.PROVISIONING_NETWORK)

    def configure_tenant_networks(self, task):
        self._configure(task, TENANT)

    def unconfigure_tenant_networks(self, task):
        self._unconfigure(task, TENANT)

    def add_cleaning_network(self, task):
        self._configure(task, ironic_network.CLEANING_NETWORK)
        return {}

    def remove_cleaning_network(self, task):
        self._unconfigure(task, ironic_network.CLEANING_NETWORK)

    def add_rescuing_network(self, task):
        self._configure(task, ironic_network.RESCUING_NETWORK)
        return {}

    def remove_rescuing_network(self, task):
        self._unconfigure(task, ironic_network.RESCUING_NETWORK)

    def add_inspection_network(self, task):
        self._configure(task, ironic_network.INSPECTION_NETWORK)
        return {}

    def remove_inspection_network(self, task):
        self._unconfigure(task, ironic_network.INSPECTION_NETWORK)

    def add_servicing_network(self, task):
        self._configure(task, ironic_network.SERVICING_NETWORK)
        return {}

    def remove_servicing_network(self, task):
        self._unconfigure(task, ironic_network.SERVICING_NETWORK)

    def need_power_on(self, task):
        return False

    def get_node_network_data(self, task):
        return task.node.network_data or {}

    # -- VIFs -------------------------------------------------------------

    def vif_list(self, task):
        return [{'id': p.internal_info[VIF_KEY]}
                for p in list(task.portgroups) + list(task.ports)
                if (p.internal_info or {}).get(VIF_KEY)]

    def get_current_vif(self, task, p_obj):
        return (p_obj.internal_info or {}).get(VIF_KEY)

    def vif_attach(self, task, vif_info):
        """Records a VIF naming a VLAN on one free port of the node; on an
        active node the port is moved to that VLAN at once."""
        vif_id = vif_info['id']
        vlan = vif_vlan(vif_id)
        if vlan is None:
            raise exception.InvalidParameterValue(
                'VIF %s does not name a VLAN: the mercury network interface '
                'takes VIF ids like vlan-120 or 120 (1-4094)' % vif_id)
        for p in list(task.ports) + list(task.portgroups):
            if (p.internal_info or {}).get(VIF_KEY) == vif_id:
                raise exception.VifAlreadyAttached(object_type='Port',
                                                   vif=vif_id,
                                                   object_uuid=p.uuid)
        port = self._free_port(task, vif_info)
        info = dict(port.internal_info or {})
        info[VIF_KEY] = vif_id
        port.internal_info = info
        port.save()
        if task.node.provision_state == states.ACTIVE:
            try:
                self._configure(task, TENANT, ports=[port])
            except exception.IronicException:
                info.pop(VIF_KEY, None)
                port.internal_info = info
                port.save()
                raise

    def _free_port(self, task, vif_info):
        wanted = vif_info.get('port_uuid')
        candidates = [p for p in task.ports
                      if not (p.internal_info or {}).get(VIF_KEY)
                      and p.portgroup_id not in self._lag_pg_ids(task)]
        if wanted:
            for p in task.ports:
                if p.uuid == wanted:
                    if p not in candidates:
                        raise exception.VifAlreadyAttached(
                            object_type='Port', vif=vif_info['id'],
                            object_uuid=p.uuid)
                    return p
            raise exception.PortNotFound(port=wanted)
        usable = [p for p in candidates if self._link(p).get('port_id')]
        if not usable:
            raise exception.NoFreePhysicalPorts(vif=vif_info['id'])
        # PXE-enabled ports first, as Ironic's own VIF attach does.
        usable.sort(key=lambda p: (not p.pxe_enabled, p.id))
        return usable[0]

    def _lag_pg_ids(self, task):
        return {pg.id for pg, _, _, _ in self._lag_groups(task)}

    def vif_detach(self, task, vif_id):
        """Forgets a VIF; on an active node its port returns to idle first."""
        for port in task.ports:
            if (port.internal_info or {}).get(VIF_KEY) == vif_id:
                if task.node.provision_state == states.ACTIVE:
                    self._unconfigure(task, TENANT, ports=[port])
                info = dict(port.internal_info)
                info.pop(VIF_KEY, None)
                port.internal_info = info
                port.save()
                return
        raise exception.VifNotAttached(vif=vif_id, node=task.node.uuid)

    # -- changes to ports ------------------------------------------------

    def port_changed(self, task, port_obj):
        """When a port's switchport or link changes while the node is on a
        network, the old switch port goes back to idle and the new one is
        configured for the network the node is on."""
        changed = port_obj.obj_what_changed()
        if not ({'extra', 'local_link_connection'} & changed):
            return
        network_type = ironic_network.get_network_type_for_state(
            task.node.provision_state)
        if network_type == IDLE:
            return
        original = next((p for p in task.ports if p.uuid == port_obj.uuid),
                        None)
        if original is not None:
            try:
                self._unconfigure(task, network_type, ports=[original])
            except exception.NetworkError as e:
                LOG.warning('Port %s: the old switch port was not reset: %s',
                            port_obj.uuid, e)
        self._configure(task, network_type, ports=[port_obj])

    def portgroup_changed(self, task, portgroup_obj):
        LOG.debug('Port group %s changed; LAGs are applied at the next '
                  'tenant network step', portgroup_obj.uuid)
