"""The main job in one screen: ops built from native_functions.yaml, on CPU and meta tensors."""

import torch

import structops


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

    # The meta rules also give each op's index space and index projection functions (IPFs).
    x, w = torch.randn(2, 1, 3, 4), torch.randn(5, 4, 6)
    print("\n" + str(structops.describe("matmul", x, w)))
    tiled = structops.sharding.run_sharded("matmul", x, w, splits={"d1": 2, "n": 3, "k": 2})
    print(
        "matmul run in 12 tiles via the IPFs equals the unsharded result:",
        torch.allclose(tiled, structops.matmul(x, w), atol=1e-5),
    )


if __name__ == "__main__":
    main()
