"""Several simulated GPUs and the links between them, built on ``gpusim.launch`` and its observers.

The model, in full:

* **Devices and topology.** A ``System`` has ``n`` devices and a ``Topology``: the directed links between
  them (``Topology.switch(n)``: every pair, as NVSwitch; ``Topology.ring(n)``: neighbours only).
* **Memory.** Every array belongs to one device (``System.place(device, array)``). A kernel launched on
  device ``i`` may be given arrays placed on device ``j`` when ``i`` and ``j`` are linked: a *peer access*,
  as CUDA peer-to-peer loads and stores over NVLink. Giving it an array of an unlinked device, or an array
  that was never placed, is refused at launch (``LaunchError``).
* **Launches.** ``System.launch(device, kernel, grid, block, args, ...)`` runs the kernel at once through
  ``gpusim.launch``, so every launch gets gpusim's own checks (bounds, races within the launch, barriers,
  metrics). Launches on one device are ordered in issue order (one stream per device). Launches on
  different devices are *concurrent* unless ``System.synchronize(devices)`` orders them: every launch issued
  on those devices before the call happens before every launch issued on them after it (vector clocks).
* **Races between devices.** Two accesses to one element of a placed array, from launches on different
  devices that are not ordered, at least one a write, not both atomic, are a ``DeviceRace`` (a
  ``DataRace``): reported on the later launch's report and in ``System.faults``, with both devices, kernels,
  blocks, threads and lines and the element. The simulator runs launches one after another in issue order,
  so a racy program computes the result of one interleaving; a race-free one computes what every order
  would (floating-point atomics on one element aside: their order is still the issue order).
* **Link traffic.** Peer accesses are counted per directed link ``(src, dst)`` in ``System.links``
  (``LinkTraffic``): per warp-level request, the distinct bytes touched (``bytes``), the distinct 32-byte
  sectors (``sectors``) and the requests. Loads move data owner -> launcher, stores launcher -> owner,
  atomics launcher -> owner (and back when the old value is used). ``gpusim/devices/links.py`` says exactly
  what is counted.

Limits: no time. Links have no bandwidth or latency and launches no duration — the simulator counts bytes,
not seconds (a schedule's length in steps is the caller's to count). No routing: a device reaches only the
devices it is linked to. No caching of remote data (each access crosses the link). No host memory and no
copy engine (a copy is a kernel that reads a peer's array). Device memory capacity is not modelled.
Placed arrays are passed whole (a view of a placed array is refused).
"""

from .links import LinkTraffic
from .races import DeviceRace, LaunchRecord
from .system import System
from .topology import Topology

__all__ = ["DeviceRace", "LaunchRecord", "LinkTraffic", "System", "Topology"]
