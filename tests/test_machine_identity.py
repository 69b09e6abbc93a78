"""A machine in a comparison is its kind: what decides its figures (GPUs, CPU, RAM, the software that matters), so
cloud loans of one kind are one side; a host (its name with its GPUs' UUIDs, its CPU and its board's and OS
install's identity) is kept apart on request, and in the library."""

from __future__ import annotations

import copy

from reports_data import make_doc, model_doc

from hwbench_gui.engine.inventory import system
from hwbench_gui.engine.reports import compare, evaluation
from hwbench_gui.engine.results import describe


def _on(doc, *, host="vm", uuid=None, machine_id=None, cpu="Test CPU"):
    doc = copy.deepcopy(doc)
    doc["hostname"] = doc["inventory"]["hostname"] = host
    doc["inventory"]["gpus"] = [{"name": "NVIDIA H200", **({"uuid": uuid} if uuid else {})}]
    doc["inventory"]["cpu"]["model"] = cpu
    if machine_id:
        doc["inventory"]["system"] = {"board_id": None, "machine_id": machine_id}
    return doc


def test_two_vms_of_one_kind_are_one_machine_and_told_apart_by_host_on_request():
    base = model_doc("resnet50", framework="torch", mode="train", precision="FP32", value=1000.0)
    a = _on(base, uuid="GPU-c91d4a17-e440-f82d-430b-21f18d84b380")
    b = _on(base, uuid="GPU-48bd59c1-9c47-ab3c-bccc-06cd2913d14c")
    again = _on(base, uuid="GPU-c91d4a17-e440-f82d-430b-21f18d84b380")
    (side,) = compare.sides_by_machine([a, b, again])
    assert (side.name, len(side.docs)) == ("vm · NVIDIA H200", 3)
    assert side.grouping.startswith("2 hosts with the same GPU NVIDIA H200, CPU Test CPU (8 threads), RAM 64 GiB")
    by_host = compare.sides_by(compare_docs := [a, b, again], "host")
    assert [(s.name, len(s.docs), s.grouping) for s in by_host] == [("vm (GPU c91d4a17) · NVIDIA H200", 2, ""),
                                                                    ("vm (GPU 48bd59c1) · NVIDIA H200", 1, "")]
    assert compare_docs == [a, b, again]
    assert evaluation.is_one_machine([a, b])
    assert evaluation.build_evaluation([a, b], with_charts=False).title == "hwbench evaluation of vm · NVIDIA H200"


def test_what_decides_the_figures_makes_two_machines_and_their_names_say_which():
    base = model_doc("resnet50", framework="torch", mode="train", precision="FP32", value=1000.0)
    older = _on(base, uuid="GPU-1")
    older["software"] = {**older["software"], "torch": "2.10.1+cu128"}
    newer = _on(base, uuid="GPU-1")
    newer["software"] = {**newer["software"], "torch": "2.11.0+cu130"}
    smaller = _on(base, uuid="GPU-2", host="box2")
    smaller["inventory"]["memory"] = {"total_bytes": 32 * 2 ** 30}
    two_gpus = _on(base, uuid="GPU-3")
    two_gpus["inventory"]["gpus"] = [{"name": "NVIDIA H200", "uuid": "GPU-3"}, {"name": "NVIDIA H200", "uuid": "GPU-4"}]
    names = [s.name for s in compare.sides_by_machine([older, newer, smaller, two_gpus])]
    assert names == ["vm · NVIDIA H200 [torch 2.10]", "vm · NVIDIA H200 [torch 2.11]", "box2 · NVIDIA H200",
                     "vm · 2× NVIDIA H200"]
    # RAM is read to the nearest 8 GiB: two loans of one cloud type that report 125.7 and 126.1 GiB are one kind
    a, b = _on(base, uuid="GPU-5"), _on(base, uuid="GPU-6")
    a["inventory"]["memory"] = {"total_bytes": int(125.7 * 2 ** 30)}
    b["inventory"]["memory"] = {"total_bytes": int(126.1 * 2 ** 30)}
    assert len(compare.sides_by_machine([a, b])) == 1
    # hosts of other names grouped: named by their GPUs and how many hosts
    c = _on(base, uuid="GPU-7", host="other")
    c["inventory"]["memory"] = a["inventory"]["memory"]
    assert [s.name for s in compare.sides_by_machine([a, b, c])] == ["NVIDIA H200 (3 hosts)"]


def test_without_gpu_uuids_the_cpu_and_the_install_tell_them_apart():
    base = make_doc("host.membw", host="vm", gpu=None)
    one, other = _on(base, machine_id="0035969ec53f6e7f"), _on(base, machine_id="7a1e0c44d2b1f390")
    assert describe.machine_key(one) != describe.machine_key(other)
    labels = describe.machine_labels([one, other])
    assert sorted(labels.values()) == ["vm (id 0035969e) · NVIDIA H200", "vm (id 7a1e0c44) · NVIDIA H200"]
    xeon, epyc = _on(base, cpu="Intel Xeon 8480"), _on(base, cpu="AMD EPYC 9654")
    assert len(compare.sides_by_machine([xeon, epyc])) == 2
    assert len(compare.sides_by_machine([one, copy.deepcopy(one)])) == 1
    assert len(compare.sides_by_machine([one, other])) == 1 and len(compare.sides_by(([one, other]), "host")) == 2


def test_a_lone_machine_keeps_its_plain_name():
    doc = _on(make_doc("host.membw"), uuid="GPU-1")
    assert describe.machine_labels([doc]) == {describe.machine_key(doc): "vm · NVIDIA H200"}


def test_the_board_and_install_ids_are_digests_and_placeholders_identify_nothing(tmp_path):
    serial, blank, machine_id = tmp_path / "serial", tmp_path / "blank", tmp_path / "machine-id"
    serial.write_text("To Be Filled\n")
    blank.write_text("00000000-0000-0000-0000-000000000000\n")
    machine_id.write_text("3d1219c7c4c5404aaa1f6d2a48adfda4\n")
    section = system.collect((str(blank), str(serial), str(tmp_path / "missing")), (str(machine_id),))
    assert section["board_id"] is None and "holds no identity" in section["reasons"]["board_id"]
    assert "does not exist" in section["reasons"]["board_id"]
    assert section["machine_id"] == system.digest("3d1219c7c4c5404aaa1f6d2a48adfda4")
    assert len(section["machine_id"]) == 16 and "3d1219c7" not in section["machine_id"]
