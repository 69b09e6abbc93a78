"""Two machines named alike ("vm") never merge: a machine is its host name with its GPUs' UUIDs, its CPU and
its board's and OS install's identity, in sides, the evaluation's title and the library."""

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


def test_two_vms_with_one_gpu_model_and_other_gpus_are_two_machines():
    base = model_doc("resnet50", framework="torch", mode="train", precision="FP32", value=1000.0)
    a = _on(base, uuid="GPU-c91d4a17-e440-f82d-430b-21f18d84b380")
    b = _on(base, uuid="GPU-48bd59c1-9c47-ab3c-bccc-06cd2913d14c")
    again = _on(base, uuid="GPU-c91d4a17-e440-f82d-430b-21f18d84b380")
    sides = compare.sides_by_machine([a, b, again])
    assert [(s.name, len(s.docs)) for s in sides] == [("vm (GPU c91d4a17) · NVIDIA H200", 2),
                                                      ("vm (GPU 48bd59c1) · NVIDIA H200", 1)]
    assert not evaluation.is_one_machine([a, b]) and evaluation.is_one_machine([a, again])
    two = evaluation.build_evaluation([a, b], with_charts=False)
    assert two.title == "hwbench evaluation of 2 machines named vm · NVIDIA H200"
    assert "document(s) of 2 machines" in evaluation.render_evaluation_html(two)
    assert evaluation.build_evaluation([a, again], with_charts=False).title == "hwbench evaluation of vm · NVIDIA H200"


def test_without_gpu_uuids_the_cpu_and_the_install_tell_them_apart():
    base = make_doc("host.membw", host="vm", gpu=None)
    one, other = _on(base, machine_id="0035969ec53f6e7f"), _on(base, machine_id="7a1e0c44d2b1f390")
    assert describe.machine_key(one) != describe.machine_key(other)
    labels = describe.machine_labels([one, other])
    assert sorted(labels.values()) == ["vm (id 0035969e) · NVIDIA H200", "vm (id 7a1e0c44) · NVIDIA H200"]
    xeon, epyc = _on(base, cpu="Intel Xeon 8480"), _on(base, cpu="AMD EPYC 9654")
    assert len(compare.sides_by_machine([xeon, epyc])) == 2
    assert len(compare.sides_by_machine([one, copy.deepcopy(one)])) == 1


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
