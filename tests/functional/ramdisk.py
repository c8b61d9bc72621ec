"""Simulated ramdisks: when Ironic shows a node powered on, post its
IPA-format inventory to ``/v1/continue``, retrying like IPA on 409/5xx."""

import base64
import itertools
import random
import threading
from concurrent import futures

import requests

GiB = 1024 ** 3
#: How ironic-python-agent 13 retries its callback: 5 attempts, 5 to 12 s
#: apart, on a 409, a 5xx or a refused connection; then it gives up.
IPA13 = {'attempts': 5, 'pause': (5.0, 12.0)}
#: ironic-python-agent 13's ``http_request_timeout``: how long a post
#: waits for its answer, in seconds.
IPA_TIMEOUT = 30
RETRIED = (409, 500, 502, 503, 504, None)
#: What a real ironic-python-agent 13 posts beyond the simulated payload
#: (one run here posted 20.1 KB: its base64 logs 17.5 KB, CPU flags 1.2
#: KB; benchmarks/results/2026-11-26-cluster-concurrency.md): the flags
#: of an x86 guest, and logs as gzip output encodes (random bytes).
REAL_CPU_FLAGS = tuple("""
fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36
clflush mmx fxsr sse sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm
constant_tsc rep_good nopl nonstop_tsc cpuid extd_apicid tsc_known_freq pni
pclmulqdq ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt
tsc_deadline_timer aes xsave avx f16c rdrand hypervisor lahf_lm cmp_legacy
cr8_legacy abm sse4a misalignsse 3dnowprefetch osvw topoext perfctr_core
invpcid_single ssbd ibrs ibpb stibp vmmcall fsgsbase tsc_adjust bmi1 avx2
smep bmi2 erms invpcid rdseed adx smap avx512f avx512dq avx512ifma
clflushopt clwb avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1
xsaves avx512_bf16 clzero xsaveerptr rdpru wbnoinvd arat npt nrip_save
avx512vbmi umip pku ospke avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni
avx512_bitalg avx512_vpopcntdq la57 rdpid fsrm flush_l1d arch_capabilities
""".split())
REAL_LOGS = base64.b64encode(random.Random(0).randbytes(13125)).decode()


def ipa_payload(macs, bmc_address=None, cpus=4, memory_mb=8192,
                disk_gb=100, error=None, real_size=False):
    """An IPA-format post; ``real_size``: as large as a real agent's
    (with :data:`REAL_CPU_FLAGS` and :data:`REAL_LOGS`), about 20 KB."""
    interfaces = [{'name': 'eth%d' % i, 'mac_address': mac,
                   'ipv4_address': '192.0.2.%d' % (100 + i) if i == 0
                   else None, 'has_carrier': True}
                  for i, mac in enumerate(macs)]
    disk = {'name': '/dev/sda', 'model': 'QEMU', 'size': disk_gb * GiB,
            'rotational': False, 'serial': None}
    cpu = {'count': cpus, 'architecture': 'x86_64', 'model_name': 'QEMU',
           'frequency': ''}
    if real_size:
        cpu['flags'] = list(REAL_CPU_FLAGS)
    return {
        'inventory': {
            'interfaces': interfaces,
            'cpu': cpu,
            'memory': {'total': memory_mb * 1024 * 1024,
                       'physical_mb': memory_mb},
            'disks': [disk], 'bmc_address': bmc_address or '',
            'bmc_v6address': '::/0',
            'boot': {'current_boot_mode': 'bios',
                     'pxe_interface': macs[0]},
            'hostname': 'localhost'},
        'root_disk': disk,
        'boot_interface': '01-' + macs[0].replace(':', '-'),
        'configuration': {'collectors': ['default', 'logs']},
        'error': error,
        'logs': REAL_LOGS if real_size else 'bG9ncw==' * 64}


class Ramdisks:
    """Watches Ironic and plays the ramdisk of each node once.

    :param nodes: ``{uuid: payload}``.
    """

    # NOTE: by default 12 attempts, 0.5 s more apart each time (33 s);
    # ``pause=(low, high)`` waits a random time in that range instead
    # (``**IPA13``: what the real ramdisk does). ``gave_up`` lists the
    # nodes whose ramdisk stopped trying, as a real one would.
    def __init__(self, ironic_url, api_urls, nodes, concurrency=50,
                 attempts=12, backoff=0.5, pause=None):
        self._ironic = ironic_url
        self._apis = itertools.cycle(list(api_urls))
        self._pending = dict(nodes)
        self._pool = futures.ThreadPoolExecutor(concurrency)
        self._attempts = attempts
        self._backoff = backoff
        self._pause = pause
        self._stop = threading.Event()
        self.results = {}
        self.gave_up = set()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join()
        self._pool.shutdown(wait=True)

    def _watch(self):
        session = requests.Session()
        while self._pending and not self._stop.wait(0.2):
            for uuid in self._powered_on(session):
                payload = self._pending.pop(uuid, None)
                if payload is not None:
                    self._pool.submit(self._post, uuid, payload)

    def _powered_on(self, session):
        resp = session.get(self._ironic + '/v1/nodes', params={
            'fields': 'uuid,power_state', 'limit': 1000},
            headers={'X-OpenStack-Ironic-API-Version': 'latest'}, timeout=30)
        return [n['uuid'] for n in resp.json()['nodes']
                if n['power_state'] == 'power on']

    def _post(self, uuid, payload):
        for attempt in range(self._attempts):
            code = self._post_once(payload)
            self.results[uuid] = code
            if code not in RETRIED:
                return
            if attempt + 1 < self._attempts:
                self._stop.wait(self._wait(attempt))
        self.gave_up.add(uuid)

    def _wait(self, attempt):
        if self._pause is not None:
            return random.uniform(*self._pause)
        return self._backoff * (attempt + 1)

    def _post_once(self, payload):
        try:
            return requests.post(next(self._apis) + '/v1/continue',
                                 json=payload,
                                 timeout=IPA_TIMEOUT).status_code
        except requests.RequestException:
            return None
