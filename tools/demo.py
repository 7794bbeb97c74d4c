"""The main job in one screen: ops built from native_functions.yaml, on CPU and meta tensors."""

import structops
import torch


def main() -> None:
    a = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    b = torch.tensor([10.0, 20.0, 30.0])
    print("structops ops:", ", ".join(structops.__all__))
    print("\nadd(a, b, alpha=2) on CPU:\n", structops.add(a, b, alpha=2))
    print("matches torch.add:", torch.equal(structops.add(a, b, alpha=2), torch.add(a, b, alpha=2)))
    print("\nsum(a, [1], keepdim=True):\n", structops.sum(a, [1], keepdim=True))

    # Meta tensors: shape, dtype and strides from the meta function, no data touched.
    big = torch.empty(1024, 1, 512, device="meta", dtype=torch.float16)
    other = torch.empty(256, 1, device="meta", dtype=torch.float32)
    r = structops.mul(big, other)
    print(f"\nmul on meta tensors: shape={tuple(r.shape)} dtype={r.dtype} device={r.device}")
    s = structops.sum(big.permute(2, 0, 1), [0], dtype=torch.float64)
    print(f"sum on meta tensors: shape={tuple(s.shape)} dtype={s.dtype} strides={s.stride()}")

    out = torch.empty(0)
    structops.add(a, b, out=out)
    print("\nadd(..., out=empty) resized out to", tuple(out.shape))
    print("torch.ops.structops.neg.default(a):\n", torch.ops.structops.neg.default(a))


if __name__ == "__main__":
    main()
