"""What a diffusion run needs in memory, by arithmetic from the models' shapes, before anything is allocated.

A pipeline holding every component on the device needs the weights of all of them (text encoders, denoiser,
VAE) plus the largest working set of one stage. diffusion.infer builds and times one component at a time, so it
needs only the largest stage: its weights plus its activations. Activations of one stage, estimated from the
meta-device trace (:mod:`.counting`): the tensors kept across the call (a UNet's skip connections) plus
:data:`WORKING_TENSORS` times the largest output of any one layer (its input, its output and the temporaries
beside them: a GroupNorm's FP32 copy, an attention's output before its projection). No torch.
"""

from __future__ import annotations

from dataclasses import dataclass

from hwbench_gui.engine.models.common import GIB

#: Tensors the size of the largest layer output alive at once in a no-grad call (see the module's docstring).
WORKING_TENSORS = 4
#: Share of the room (free GPU memory, available RAM) the estimate may fill: the CUDA context, cuBLAS and
#: compiled kernels' workspaces and the allocator's rounding take the rest.
FIT_FRACTION = 0.92
#: What diffusers offers a user whose pipeline does not fit (the names of its own methods).
MODEL_OFFLOAD = "enable_model_cpu_offload()"
SEQUENTIAL_OFFLOAD = "enable_sequential_cpu_offload()"


@dataclass(frozen=True)
class Stage:
    """One component's call: its weights and its activations, in bytes."""

    name: str
    weight_bytes: int
    activation_bytes: int

    @property
    def total(self) -> int:
        return self.weight_bytes + self.activation_bytes


def activations(kept_bytes: int, largest_output_bytes: int) -> int:
    return kept_bytes + WORKING_TENSORS * largest_output_bytes


@dataclass(frozen=True)
class Plan:
    stages: tuple[Stage, ...]

    @property
    def one_at_a_time(self) -> int:
        """What hwbench needs: the largest stage alone."""
        return max(s.total for s in self.stages)

    @property
    def all_resident(self) -> int:
        """What a pipeline with every component on the device needs: all weights and the largest activations."""
        return sum(s.weight_bytes for s in self.stages) + max(s.activation_bytes for s in self.stages)

    def arithmetic(self) -> str:
        parts = "; ".join(f"{s.name} {s.weight_bytes / GIB:.2f} GiB weights + {s.activation_bytes / GIB:.2f} GiB "
                          "activations" for s in self.stages)
        return (f"{parts}: one component at a time {self.one_at_a_time / GIB:.2f} GiB, all resident "
                f"{self.all_resident / GIB:.2f} GiB")

    def verdict(self, room_bytes: int, room_text: str) -> tuple[str | None, str | None]:
        """(why the run cannot fit, or None; the note a user with this room needs, or None)."""
        usable = room_bytes * FIT_FRACTION
        if self.one_at_a_time > usable:
            biggest = max(self.stages, key=lambda s: s.total)
            return (f"does not fit: the {biggest.name} alone needs {biggest.total / GIB:.2f} GiB "
                    f"({biggest.weight_bytes / GIB:.2f} GiB weights + {biggest.activation_bytes / GIB:.2f} GiB "
                    f"activations, estimate) of {room_text} (usable {FIT_FRACTION:.0%}); a smaller batch or "
                    f"size, or diffusers' {SEQUENTIAL_OFFLOAD} (weights streamed from host memory, far slower)",
                    None)
        if self.all_resident > usable:
            return None, (f"a pipeline holding every component needs {self.all_resident / GIB:.2f} GiB, more than "
                          f"{FIT_FRACTION:.0%} of {room_text}: a user would need diffusers' {MODEL_OFFLOAD} "
                          "(each component moved to the device when it runs); hwbench times them one at a time")
        return None, None
