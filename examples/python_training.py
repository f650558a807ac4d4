#!/usr/bin/python3
"""Train peaks_mlp.onnx (x: float[batch,2] -> y: float[batch,1]) on the peaks surface with
`import tandem` (mse, adam), export it, reload it as a tandem.Session and check that its
predictions equal the training session's. Exits 1 when the loss did not fall.

usage: python_training.py MODEL.onnx [OUT_DIR] [EPOCHS]
"""
import os
import sys

import numpy as np

import tandem


def peaks(n=60):
    g = np.linspace(-3, 3, n)
    x, y = np.meshgrid(g, g)
    z = (3 * (1 - x) ** 2 * np.exp(-x ** 2 - (y + 1) ** 2)
         - 10 * (x / 5 - x ** 3 - y ** 5) * np.exp(-x ** 2 - y ** 2)
         - np.exp(-(x + 1) ** 2 - y ** 2) / 3)
    return (np.stack([x.ravel(), y.ravel()], axis=1).astype(np.float32),
            z.reshape(-1, 1).astype(np.float32))


def main():
    if len(sys.argv) not in (2, 3, 4):
        sys.exit(__doc__)
    model = sys.argv[1]
    out_dir = sys.argv[2] if len(sys.argv) > 2 else "."
    epochs = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    x, y = peaks()

    with tandem.TrainingSession(model, loss="mse", optimizer="adam", lr=0.01, device="cpu") as ts:
        initial, _ = ts.eval_step(x, y)
        print(f"{model}: {len(x)} samples, initial loss {initial:.6f}")
        history = ts.fit(x, y, epochs=epochs, batch_size=64,
                         callback=lambda e, loss: print(f"epoch {e + 1:3d}/{epochs} loss {loss:.6f}"))
        final, _ = ts.eval_step(x, y)
        ts.save_checkpoint(os.path.join(out_dir, "peaks_py.ckpt"))
        exported = os.path.join(out_dir, "peaks_py_trained.onnx")
        ts.export(exported)
        predicted = ts.predict(x)[0]

    with tandem.Session(exported) as s:
        served = s.run({s.inputs[0].name: x})[s.outputs[0].name]
    diff = float(np.max(np.abs(served - predicted)))
    same = np.allclose(served, predicted, rtol=1e-5, atol=1e-5)
    print(f"exported {exported}: predictions {'equal' if same else 'DIFFER from'} "
          f"the training session's (max |diff| {diff:.3g})")
    fell = final < initial and history[-1] < history[0]
    print(f"loss {'fell' if fell else 'did NOT fall'}: {initial:.6f} -> {final:.6f}")
    sys.exit(0 if fell and same else 1)


if __name__ == "__main__":
    main()
