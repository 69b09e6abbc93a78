"""Block devices from /sys/block with their kind, size and what is mounted on them.

A mount is tied to its disk through the device number (``/sys/dev/block/MAJ:MIN``), following
partitions to their parent and device-mapper/LVM volumes to the disks under them; this also finds
a whole-disk filesystem such as a VM's ``/dev/vda`` mounted on "/".
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import psutil

from hwbench_gui.engine.inventory.fields import new_section, put

SYS_BLOCK = Path("/sys/block")
_SKIP_PREFIXES = ("loop", "ram", "zram", "fd", "dm-")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace").strip()
    except OSError:
        return None


def disk_kind(name: str, rotational: str | None, driver: str | None) -> str:
    """NVMe, virtio, RAID (md), SSD or HDD; a VM's rotational flag says nothing about the host's disk."""
    if name.startswith("nvme"):
        return "NVMe"
    if driver == "virtio_blk" or name.startswith("vd"):
        return "virtio"
    if name.startswith("xvd"):
        return "Xen virtual"
    if name.startswith("md"):
        return "RAID (md)"
    if name.startswith("sr"):
        return "optical"
    if rotational == "0":
        return "SSD"
    if rotational == "1":
        return "HDD"
    return "unknown"


def disks_under(sysfs_dev: Path, listed: frozenset[str] | set[str] = frozenset()) -> set[str]:
    """Disk names under a /sys block node: itself when in ``listed`` (e.g. an md RAID), the parent of a
    partition, or the disks under a device-mapper volume's slaves."""
    real = Path(os.path.realpath(sysfs_dev))
    if not real.exists():
        return set()
    if real.name in listed:
        return {real.name}
    slaves = real / "slaves"
    if slaves.is_dir() and any(slaves.iterdir()):
        found: set[str] = set()
        for slave in slaves.iterdir():
            found |= disks_under(slave, listed)
        return found
    if (real / "partition").exists():
        return {real.parent.name}
    return {real.name}


def _device_number(partition) -> tuple[int, int] | None:
    for path, attr in ((partition.device, "st_rdev"), (partition.mountpoint, "st_dev")):
        if not path or (attr == "st_rdev" and not path.startswith("/dev/")):
            continue
        try:
            number = getattr(os.stat(path), attr)
        except OSError:
            continue
        if os.major(number) != 0:  # major 0: an anonymous device (overlay, btrfs subvolume, tmpfs)
            return os.major(number), os.minor(number)
    return None


def collect() -> dict[str, Any]:
    """The disks section: ``devices`` (one dict per disk) and ``root_disk`` (the disk holding "/")."""
    section = new_section(devices=[])
    if not sys.platform.startswith("linux"):
        _other_os(section)
        return section
    devices: dict[str, dict[str, Any]] = {}
    for entry in sorted(SYS_BLOCK.iterdir()) if SYS_BLOCK.is_dir() else []:
        if entry.name.startswith(_SKIP_PREFIXES):
            continue
        devices[entry.name] = _device(entry)
    section["devices"] = list(devices.values())

    try:
        partitions = psutil.disk_partitions(all=False)
    except Exception as exc:
        partitions = []
        section["reasons"]["mounts"] = f"psutil.disk_partitions: {exc}"
    root_disks: set[str] = set()
    for partition in partitions:
        number = _device_number(partition)
        owners = disks_under(Path(f"/sys/dev/block/{number[0]}:{number[1]}"), set(devices)) if number else set()
        mount = {"mountpoint": partition.mountpoint, "device": partition.device, "fstype": partition.fstype}
        try:
            usage = psutil.disk_usage(partition.mountpoint)
            mount["size_bytes"], mount["free_bytes"] = int(usage.total), int(usage.free)
        except Exception:
            mount["size_bytes"] = mount["free_bytes"] = None
        for owner in owners:
            if owner in devices:
                devices[owner]["mounts"].append(mount)
        if partition.mountpoint == "/":
            root_disks |= owners & devices.keys()
    if root_disks:
        put(section, "root_disk", ", ".join(sorted(root_disks)))
    else:
        root_fs = next((p.fstype for p in partitions if p.mountpoint == "/"), None)
        put(section, "root_disk", None, f'"/" is on {root_fs or "a filesystem psutil does not list"}; '
                                        "its backing disk is not visible here (container overlay?)")
    return section


def _device(entry: Path) -> dict[str, Any]:
    device = new_section(name=entry.name, path=f"/dev/{entry.name}", mounts=[])
    driver_link = entry / "device" / "driver"
    driver = os.path.basename(os.path.realpath(driver_link)) if driver_link.exists() else None
    rotational = _read(entry / "queue" / "rotational")
    device["kind"] = disk_kind(entry.name, rotational, driver)
    device["rotational"] = {"0": False, "1": True}.get(rotational or "")
    device["removable"] = _read(entry / "removable") == "1"
    device["driver"] = driver
    model = _read(entry / "device" / "model")
    vendor = _read(entry / "device" / "vendor")
    if device["kind"] == "virtio":
        vendor = None  # virtio's "vendor" is a PCI id such as 0x1af4, not a maker
    put(device, "model", " ".join(filter(None, (vendor, model))) or None,
        "the virtual disk reports no model" if device["kind"] in ("virtio", "Xen virtual") else "sysfs has no model")
    sectors = _read(entry / "size")
    # /sys/block/*/size counts 512-byte sectors whatever the device's own sector size.
    put(device, "size_bytes", int(sectors) * 512 if sectors and sectors.isdigit() else None, "sysfs has no size")
    return device


def _other_os(section: dict[str, Any]) -> None:
    section["reasons"]["devices"] = f"block devices are read from Linux sysfs; on {sys.platform} only mounts are listed"
    try:
        partitions = psutil.disk_partitions(all=False)
    except Exception as exc:
        section["reasons"]["mounts"] = f"psutil.disk_partitions: {exc}"
        partitions = []
    for partition in partitions:
        device = new_section(name=partition.device, path=partition.device, kind="unknown", model=None,
                             size_bytes=None, mounts=[{"mountpoint": partition.mountpoint, "device": partition.device,
                                                       "fstype": partition.fstype}])
        device["reasons"]["kind"] = f"not read on {sys.platform}"
        try:
            device["size_bytes"] = int(psutil.disk_usage(partition.mountpoint).total)
        except Exception as exc:
            device["reasons"]["size_bytes"] = str(exc)
        section["devices"].append(device)
    root = os.path.abspath(os.sep)
    section["root_disk"] = next((d["name"] for d in section["devices"] if d["mounts"][0]["mountpoint"] == root), None)
