#!/usr/bin/env python3
"""The model zoo: Tandem against ONNX Runtime, OpenVINO and PyTorch on today's architectures.

usage: bench/zoo.sh [--models NAME,...] [--families cnn,vit,text,...] [--exporters dynamo,legacy]
                    [--batches small,large] [--threads 2] [--rounds 3] [--seconds 1.0]
                    [--engines tandem,ort,openvino,torch] [--baseline LIBTANDEM]
                    [--baseline-env K=V,...] [--busy N] [--quantize none|dynamic|static] [--cache DIR]
                    [--markdown FILE] [--list]
(the .sh builds Tandem and makes the environment: bench/setup_torch2_env.sh)

Each model is built from its library's own definition with random weights (torchvision,
timm, ultralytics from its yaml, Hugging Face transformers and diffusers from a config:
nothing is downloaded), seeded, with realistic BatchNorm statistics (running means in
[-0.2, 0.2], variances in [0.5, 1.5]: with PyTorch's zeros and ones a deep network's maps
shrink or grow until its output is degenerate), and exported by torch.onnx.export twice:
with the default (dynamo) exporter and the legacy (TorchScript) one — ultralytics' YOLOs
by ultralytics' own export() instead, as its users export them (exporter "ultralytics") —
with static shapes at batch 1 and at the model's larger batch. Families: classification
CNNs, ViTs, text encoders, segmentation, detection (post-processing included), mobile
hybrids, generation (a Stable-Diffusion-style VAE decoder and UNet) and Keras applications
(keras: converted by tf2onnx in the Keras environment, bench/keras_export.py, channels-last
with the Transposes, Pads and Mul/Add batch norms tf2onnx writes; Keras's own output is their
reference, and there is no PyTorch column). Every export is cached in --cache (default
build/zoo) and reused by later runs.

The engines each run in their own process with the same thread count, taking turns
(bench/turns.py): Tandem (its Python API), ONNX Runtime (CPUExecutionProvider, all graph
optimizations), OpenVINO (CPU, INFERENCE_PRECISION_HINT=f32: no bf16 even where the CPU
has it) and PyTorch eager (torch.inference_mode) on the module the file was exported
from. Per case the table gives each engine's p50 (median over rounds of each round's
median call), Tandem / each other engine, and each ONNX engine's largest output error
against PyTorch relative to the largest PyTorch output (the output's scale). Then the
geometric mean of Tandem / ORT per family. --baseline adds Tandem from another build
(its libtandem.so, e.g. a worktree of the commit before a change) as one more engine
taking turns, with Tandem / baseline per case and per family: a change's before and
after in the same run; --baseline-env runs the baseline (by default this build) under another
environment. --busy N keeps N cores busy with spinning processes while timing, as another
program would. --quantize dynamic times each export after ONNX Runtime's quantize_dynamic
(int8 weights: DynamicQuantizeLinear + MatMulInteger), the usual first step of CPU users,
with PyTorch still float32: its error column is then each engine's quantization error;
--quantize static after quantize_static (QDQ, per-channel int8 weights, uint8 activations
calibrated on noisy copies of the case's inputs), what CPU users do to CNNs.
A case an engine cannot run says why and the
rest go on; the exit status is 1 if Tandem failed a case.
"""
import argparse
import atexit
import contextlib
import datetime
import math
import os
import statistics
import subprocess
import sys
import traceback
import warnings

import numpy as np

from turns import Worker, WorkerFailed, cpu_model, fmt_ms, onnx_runner, serve, take_turns, vector_isa

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "python")]  # `import tandem` from the source tree
ENGINES = ("tandem", "baseline", "ort", "openvino", "torch")  # baseline: only with --baseline
ENGINE_NAMES = {"tandem": "Tandem", "baseline": "Tandem baseline", "ort": "ORT", "openvino": "OpenVINO",
                "torch": "PyTorch"}
SEQ = 128  # text models' sequence length


# -- the models -----------------------------------------------------------------------------
# name -> (family, constructor of the eval-mode module, inputs(batch) -> {name: array},
#          the larger batch). Modules take their inputs by name, in the order given.

def torchvision_model(name, **kw):
    def make():
        import torchvision
        return getattr(torchvision.models, name)(weights=None, **kw)
    return make


def timm_model(name):
    def make():
        import timm
        return timm.create_model(name, pretrained=False)
    return make


def torchvision_segmenter(name, classes=21):
    """A torchvision segmentation model returning its "out" map (no auxiliary head)."""
    def make():
        import torch
        import torchvision

        class Out(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.model = getattr(torchvision.models.segmentation, name)(
                    weights=None, weights_backbone=None, num_classes=classes, aux_loss=False)

            def forward(self, x):
                return self.model(x)["out"]
        return Out()
    return make


def torchvision_detector(name, **kw):
    """A torchvision detector in eval mode returning the first image's boxes (its
    post-processing, NMS included, in the graph)."""
    def make():
        import torch
        import torchvision

        class Boxes(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.model = getattr(torchvision.models.detection, name)(
                    weights=None, weights_backbone=None, **kw)

            def forward(self, x):
                return self.model(list(x))[0]["boxes"]
        return Boxes()
    return make


def ultralytics_model(yaml):
    """An ultralytics model built from its yaml (random weights, nothing downloaded) returning
    its first output (YOLO detect: [N, 84, 8400]); `.yolo` holds the YOLO object whose own
    export() writes the ONNX file (ultralytics_export)."""
    def make():
        import torch
        from ultralytics import YOLO

        class FirstOutput(torch.nn.Module):
            def __init__(self):
                super().__init__()
                yolo = YOLO(yaml)
                # Not a submodule: YOLO is a torch Module whose train() trains (and eval() calls it).
                self.__dict__["yolo"] = yolo
                self.model = yolo.model

            def forward(self, images):
                out = self.model(images)
                while isinstance(out, (list, tuple)):  # (detections, ...), and seg's ((boxes, ...), ...)
                    out = out[0]
                return out
        return FirstOutput()
    return make


def ultralytics_export(module, batch, size, path):
    """Writes `module`'s model (ultralytics_model) exported by ultralytics itself at `batch` x
    `size`² (opset 17, its onnxslim pass) to path, input "images" and first output renamed "y"."""
    import tempfile

    import onnx
    os.environ.setdefault("YOLO_AUTOINSTALL", "false")  # nothing installed behind the lock's back
    os.environ.setdefault("YOLO_OFFLINE", "true")
    with tempfile.TemporaryDirectory() as work, contextlib.chdir(work):  # export() writes beside the yaml's name
        written = module.yolo.export(format="onnx", imgsz=size, batch=batch, opset=17, simplify=True, verbose=False)
        model = onnx.load(written)
    first = model.graph.output[0].name
    for node in model.graph.node:
        node.output[:] = ["y" if o == first else o for o in node.output]
    model.graph.output[0].name = "y"
    onnx.save(model, path)


def diffusers_vae_decoder():
    """A Stable-Diffusion-style VAE decoder (diffusers AutoencoderKL, a small config: 3
    blocks of 64-256 channels, GroupNorm of 32 groups, a mid-block attention): latent
    [N, 4, 32, 32] -> image [N, 3, 128, 128]."""
    import torch
    import diffusers

    class Decoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.vae = diffusers.AutoencoderKL(
                in_channels=3, out_channels=3, latent_channels=4, block_out_channels=(64, 128, 256),
                down_block_types=("DownEncoderBlock2D",) * 3, up_block_types=("UpDecoderBlock2D",) * 3,
                layers_per_block=2, norm_num_groups=32, sample_size=128)

        def forward(self, latent):
            return self.vae.decode(latent).sample
    return Decoder()


def diffusers_unet():
    """A Stable-Diffusion-style UNet2DConditionModel at a small config (64 and 128 channels,
    cross-attention to 77 tokens of 128): sample [N, 4, 32, 32], timestep, text states -> noise."""
    import torch
    import diffusers

    class Unet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.unet = diffusers.UNet2DConditionModel(
                sample_size=32, in_channels=4, out_channels=4, block_out_channels=(64, 128), layers_per_block=1,
                down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
                up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), cross_attention_dim=128, attention_head_dim=8,
                norm_num_groups=32)

        def forward(self, sample, timestep, text):
            return self.unet(sample, timestep, encoder_hidden_states=text).sample
    return Unet()


def latent(size=32):
    return lambda b: {"latent": np.random.default_rng(1).standard_normal((b, 4, size, size), dtype=np.float32)}


def unet_inputs(b):
    rng = np.random.default_rng(1)
    return {"sample": rng.standard_normal((b, 4, 32, 32), dtype=np.float32), "timestep": np.array([500], np.int64),
            "text": rng.standard_normal((b, 77, 128), dtype=np.float32)}


def image_nhwc(size=224):
    """A Keras application's input: "x" [N, size, size, 3] (channels-last)."""
    return lambda b: {"x": np.random.default_rng(1).standard_normal((b, size, size, 3), dtype=np.float32)}


def images(size):
    """The input of an ultralytics model: "images" [N, 3, size, size] in [0, 1]."""
    return lambda b: {"images": np.random.default_rng(1).random((b, 3, size, size), dtype=np.float32)}


def image(size=224):
    return lambda b: {"x": np.random.default_rng(1).standard_normal((b, 3, size, size), dtype=np.float32)}


def tokens(vocab):
    def make(b):
        rng = np.random.default_rng(1)
        return {"input_ids": rng.integers(0, vocab, (b, SEQ), dtype=np.int64),
                "attention_mask": np.ones((b, SEQ), dtype=np.int64)}
    return make


def text_encoder(model_class, config_class, **config):
    """A Hugging Face model from its default config (with `config` overrides), returning its
    first output (the last hidden state) for input_ids and attention_mask."""
    def make():
        import torch
        import transformers

        class FirstOutput(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.model = getattr(transformers, model_class)(getattr(transformers, config_class)(**config))

            def forward(self, input_ids, attention_mask):
                return self.model(input_ids=input_ids, attention_mask=attention_mask)[0]
        return FirstOutput()
    return make


def segformer():
    """A Hugging Face SegFormer (its default config: MiT-b0's shape, 150 classes) returning
    its logits at a quarter of the input's size."""
    import torch
    import transformers

    class Logits(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = transformers.SegformerForSemanticSegmentation(transformers.SegformerConfig())

        def forward(self, x):
            return self.model(pixel_values=x).logits
    return Logits()


def whisper_encoder():
    import torch
    import transformers

    class Encoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = transformers.WhisperModel(transformers.WhisperConfig()).get_encoder()

        def forward(self, input_features):
            return self.encoder(input_features=input_features)[0]
    return Encoder()


def mel_frames(b):
    return {"input_features": np.random.default_rng(1).standard_normal((b, 80, 3000), dtype=np.float32)}


MODELS = {
    "resnet50": ("cnn", torchvision_model("resnet50"), image(), 8),
    "densenet121": ("cnn", torchvision_model("densenet121"), image(), 8),
    "inception_v3": ("cnn", torchvision_model("inception_v3", aux_logits=False, init_weights=True), image(299), 8),
    "mobilenet_v2": ("cnn", torchvision_model("mobilenet_v2"), image(), 8),
    "squeezenet1_1": ("cnn", torchvision_model("squeezenet1_1"), image(), 8),
    "efficientnet_b0": ("cnn", timm_model("efficientnet_b0"), image(), 8),
    "mobilenetv3_large_100": ("cnn", timm_model("mobilenetv3_large_100"), image(), 8),
    "regnety_016": ("cnn", timm_model("regnety_016"), image(), 8),
    "convnext_tiny": ("cnn", timm_model("convnext_tiny"), image(), 8),
    "ghostnet_100": ("cnn", timm_model("ghostnet_100"), image(), 8),
    "vit_base_patch16_224": ("vit", timm_model("vit_base_patch16_224"), image(), 4),
    "deit_small_patch16_224": ("vit", timm_model("deit_small_patch16_224"), image(), 4),
    "swin_tiny_patch4_window7_224": ("vit", timm_model("swin_tiny_patch4_window7_224"), image(), 4),
    "mobilevit_s": ("vit", timm_model("mobilevit_s"), image(256), 4),
    "bert_base": ("text", text_encoder("BertModel", "BertConfig"), tokens(30522), 8),
    "roberta_base": ("text", text_encoder("RobertaModel", "RobertaConfig", vocab_size=50265,
                                          max_position_embeddings=514, pad_token_id=1), tokens(50265), 8),
    "distilbert": ("text", text_encoder("DistilBertModel", "DistilBertConfig"), tokens(30522), 8),
    # all-MiniLM-L6-v2's shape (the sentence encoder users quantize first)
    "minilm_l6": ("text", text_encoder("BertModel", "BertConfig", hidden_size=384, num_hidden_layers=6,
                                       num_attention_heads=12, intermediate_size=1536), tokens(30522), 8),
    "albert_base": ("text", text_encoder("AlbertModel", "AlbertConfig", hidden_size=768, num_attention_heads=12,
                                         intermediate_size=3072), tokens(30000), 8),
    "electra_small": ("text", text_encoder("ElectraModel", "ElectraConfig"), tokens(30522), 8),
    "gpt2": ("text", text_encoder("GPT2Model", "GPT2Config", use_cache=False), tokens(50257), 8),
    "t5_small_encoder": ("text", text_encoder("T5EncoderModel", "T5Config"), tokens(32128), 8),
    "whisper_tiny_encoder": ("text", whisper_encoder, mel_frames, 4),
    # Segmentation at the sizes users run them.
    "lraspp_mobilenet_v3_large": ("segmentation", torchvision_segmenter("lraspp_mobilenet_v3_large"), image(520), 2),
    "deeplabv3_mobilenet_v3_large": ("segmentation", torchvision_segmenter("deeplabv3_mobilenet_v3_large"),
                                     image(512), 2),
    "fcn_resnet50": ("segmentation", torchvision_segmenter("fcn_resnet50"), image(256), 2),
    "segformer_b0": ("segmentation", segformer, image(512), 2),
    # Detection, post-processing included.
    # (score thresholds 0: random weights score low, and without boxes post-processing is idle)
    "ssdlite320_mobilenet_v3_large": ("detection", torchvision_detector("ssdlite320_mobilenet_v3_large",
                                                                        score_thresh=0.0), image(320), 2),
    "fasterrcnn_mobilenet_v3_large_320_fpn": ("detection", torchvision_detector(
        "fasterrcnn_mobilenet_v3_large_320_fpn", box_score_thresh=0.0), image(320), 2),
    "retinanet_resnet50_fpn": ("detection", torchvision_detector("retinanet_resnet50_fpn", min_size=320, max_size=320,
                                                                 score_thresh=0.0), image(320), 2),
    # Mobile and hybrid architectures of 2019-25.
    "efficientformerv2_s0": ("mobile", timm_model("efficientformerv2_s0"), image(), 8),
    "fastvit_t8": ("mobile", timm_model("fastvit_t8"), image(256), 8),
    "levit_128s": ("mobile", timm_model("levit_128s"), image(), 8),
    "edgenext_small": ("mobile", timm_model("edgenext_small"), image(256), 8),
    "repvit_m1": ("mobile", timm_model("repvit_m1"), image(), 8),
    "mobilenetv4_conv_small": ("mobile", timm_model("mobilenetv4_conv_small"), image(), 8),
    "mobilenetv4_hybrid_medium": ("mobile", timm_model("mobilenetv4_hybrid_medium"), image(256), 8),
    "hrnet_w18_small": ("mobile", timm_model("hrnet_w18_small"), image(), 8),
    "dla34": ("cnn", timm_model("dla34"), image(), 8),
    "cspdarknet53": ("cnn", timm_model("cspdarknet53"), image(256), 8),
    "mnasnet_100": ("mobile", timm_model("mnasnet_100"), image(), 8),
    "shufflenet_v2_x1_0": ("mobile", torchvision_model("shufflenet_v2_x1_0"), image(), 8),
    "googlenet": ("cnn", torchvision_model("googlenet", aux_logits=False, init_weights=True), image(), 8),
    # ultralytics YOLO at 640², exported by ultralytics' own export() (OWN_EXPORTERS).
    "yolov8n": ("detection", ultralytics_model("yolov8n.yaml"), images(640), 4),
    "yolov8n_seg": ("segmentation", ultralytics_model("yolov8n-seg.yaml"), images(640), 4),
    "yolov8n_pose": ("detection", ultralytics_model("yolov8n-pose.yaml"), images(640), 4),
    "yolo11n": ("detection", ultralytics_model("yolo11n.yaml"), images(640), 4),
    # Generation: diffusers at small configs.
    "sd_vae_decoder": ("generation", diffusers_vae_decoder, latent(), 2),
    "sd_unet": ("generation", diffusers_unet, unet_inputs, 2),
}
# Keras applications (keras.applications, weights=None), converted by tf2onnx in the Keras
# environment (bench/keras_export.py): name -> (application, input size, larger batch). No
# PyTorch module: Keras's own output, written at export, is the error's reference.
KERAS = {"keras_mobilenet_v2": ("MobileNetV2", 224, 8), "keras_efficientnet_b0": ("EfficientNetB0", 224, 8),
         "keras_resnet50": ("ResNet50", 224, 8), "keras_mobilenet_v3_small": ("MobileNetV3Small", 224, 8)}
MODELS.update({name: ("keras", None, image_nhwc(size), large) for name, (_, size, large) in KERAS.items()})
FAMILIES = sorted({family for family, *_ in MODELS.values()})


def keras_reference(path):
    """Where the Keras export of `path` keeps Keras's own output."""
    return path[:-len(".onnx")] + ".keras.out.npy"


def keras_export(name, batch, path):
    """Writes Keras application `name` converted by tf2onnx at `batch` to path, and Keras's own
    output on the case's input beside it (keras_reference), in the Keras environment."""
    application, size, _ = KERAS[name]
    made = subprocess.run(["bash", os.path.join(ROOT, "tools", "python_env.sh"), "keras"], capture_output=True,
                          text=True, check=True)
    python = made.stdout.strip().splitlines()[-1]
    x_path = path + ".input.npy"
    np.save(x_path, MODELS[name][2](batch)["x"])
    subprocess.run([python, os.path.join(ROOT, "bench", "keras_export.py"), application, str(batch), str(size), path,
                    x_path, keras_reference(path)], check=True, stdout=sys.stderr)
    os.remove(x_path)


# Models written by their library's own exporter, under its name, instead of torch.onnx.export's
# two: name -> (exporter, write(name, batch, path)).
OWN_EXPORTERS = {name: ("ultralytics", lambda name, batch, path: ultralytics_export(build(name), batch, 640, path))
                 for name in ("yolov8n", "yolov8n_seg", "yolov8n_pose", "yolo11n")}
OWN_EXPORTERS.update({name: ("tf2onnx", keras_export) for name in KERAS})
# Part of every cached export's name: exports made before the BatchNorm statistics were set
# hold other weights, and are not reused.
WEIGHTS = "bn-stats"


def realistic_batch_norms(module):
    """Seeded running statistics for every BatchNorm of `module` (PyTorch starts them at 0 and 1)."""
    import torch
    generator = torch.Generator().manual_seed(1)
    for m in module.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and m.running_mean is not None:
            with torch.no_grad():
                m.running_mean.copy_(torch.rand(m.running_mean.shape, generator=generator) * 0.4 - 0.2)
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=generator) + 0.5)
    return module


def build(name):
    """The model's eval-mode module, with the same weights in every process (seeded)."""
    import torch
    torch.manual_seed(0)
    return realistic_batch_norms(MODELS[name][1]()).eval()


def export(name, exporter, batch, path):
    """Writes the model exported by `exporter` at `batch` (static shapes) to path."""
    if name in OWN_EXPORTERS:
        with contextlib.redirect_stdout(sys.stderr):
            OWN_EXPORTERS[name][1](name, batch, path)
        return
    import torch
    feeds = MODELS[name][2](batch)
    module = build(name)
    args = tuple(torch.from_numpy(v) for v in feeds.values())
    tmp = path + ".part"
    # The dynamo exporter reports its stages on stdout; the table keeps stdout to itself.
    with torch.inference_mode(False), torch.no_grad(), contextlib.redirect_stdout(sys.stderr):
        if exporter == "dynamo":
            torch.onnx.export(module, args, tmp, dynamo=True, input_names=list(feeds), output_names=["y"],
                              external_data=False)
        else:
            warnings.filterwarnings("ignore", message="You are using the legacy TorchScript-based ONNX export")
            torch.onnx.export(module, args, tmp, dynamo=False, input_names=list(feeds), output_names=["y"],
                              opset_version=17)
    os.replace(tmp, path)


def quantize_dynamic(float_path, path):
    """Writes float_path's model with int8 weights (onnxruntime.quantization.quantize_dynamic, QInt8:
    MatMulInteger and DynamicQuantizeLinear) to path."""
    from onnxruntime.quantization import QuantType
    from onnxruntime.quantization import quantize_dynamic as ort_quantize_dynamic
    tmp = path + ".part"
    with contextlib.redirect_stdout(sys.stderr):
        ort_quantize_dynamic(float_path, tmp, weight_type=QuantType.QInt8)
    os.replace(tmp, path)


def quantize_static(float_path, path, feeds):
    """Writes float_path's model statically quantized (onnxruntime.quantization.quantize_static: QDQ
    format, per-channel int8 weights, uint8 activations, MinMax calibration on 8 noisy copies of the
    case's inputs) to path."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType
    from onnxruntime.quantization import quantize_static as ort_quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process
    rng = np.random.default_rng(0)
    samples = [{k: v + (0.1 * v.std() * rng.standard_normal(v.shape)).astype(v.dtype) if v.dtype.kind == "f" else v
                for k, v in feeds.items()} for _ in range(8)]

    class Samples(CalibrationDataReader):
        def __init__(self):
            self.left = iter(samples)

        def get_next(self):
            return next(self.left, None)

    tmp, pre = path + ".part", path + ".pre.part"
    with contextlib.redirect_stdout(sys.stderr):
        quant_pre_process(float_path, pre, skip_symbolic_shape=True)
        ort_quantize_static(pre, tmp, Samples(), quant_format=QuantFormat.QDQ, per_channel=True,
                            weight_type=QuantType.QInt8, activation_type=QuantType.QUInt8)
    os.remove(pre)
    os.replace(tmp, path)


# -- one engine, one case, in its own process -------------------------------------------------

def make_runner(engine, name, onnx_path, feeds, threads):
    if engine != "torch":  # the baseline is Tandem from another library (TANDEM_LIBRARY)
        return onnx_runner("tandem" if engine == "baseline" else engine, onnx_path, feeds, threads)
    import torch
    torch.set_num_threads(threads)
    module = build(name)
    inputs = {k: torch.from_numpy(v) for k, v in feeds.items()}

    def run():
        with torch.inference_mode():
            return module(**inputs).numpy()
    return run


def worker(engine, name, onnx_path, batch, threads, out_path):
    serve(make_runner(engine, name, onnx_path, MODELS[name][2](int(batch)), int(threads)), out_path)


# -- the driver -----------------------------------------------------------------------------

def versions():
    import onnxruntime
    import openvino
    import tandem
    import timm
    import torch
    import transformers
    return [f"Tandem {tandem.version()} ({tandem.library_path})", f"ONNX Runtime {onnxruntime.__version__}",
            f"OpenVINO {openvino.__version__} (f32)",
            f"PyTorch {torch.__version__} (oneDNN: {torch.backends.mkldnn.is_available()}, "
            f"MKL: {torch.backends.mkl.is_available()})", f"timm {timm.__version__}, transformers {transformers.__version__}"]


def parse_env(text):
    """'K=V,K2=V2' as a dict; an entry without '=' is an error."""
    pairs = [item.split("=", 1) for item in text.split(",") if item]
    if any(len(p) != 2 or not p[0] for p in pairs):
        sys.exit(f"error: --baseline-env {text!r}: expected K=V[,K=V...]")
    return dict(pairs)


def keep_cores_busy(n):
    """Starts n processes that spin until this one ends (however it ends: each also stops
    once its parent is gone): another program holding cores."""
    spin = "import os\nparent = os.getppid()\nwhile os.getppid() == parent: pass"
    spinners = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(n)]
    atexit.register(lambda: [p.kill() for p in spinners])


def first_line(text, width=100):
    lines = [line for line in str(text).strip().splitlines() if line.strip()]
    line = lines[-1] if lines else "?"
    return (line[:width - 3] + "...") if len(line) > width else line


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", help="comma-separated model names (default: all; --list shows them)")
    ap.add_argument("--families", default=",".join(FAMILIES), help="comma-separated: " + ", ".join(FAMILIES))
    ap.add_argument("--exporters", default="dynamo,legacy", help="comma-separated: dynamo, legacy")
    ap.add_argument("--batches", default="small,large", help="small (batch 1), large (the model's larger batch)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=1.0, help="timed seconds per engine, case and round")
    ap.add_argument("--slice", type=float, default=0.25, help="seconds an engine runs before the next takes its turn")
    ap.add_argument("--cache", default=os.path.join(ROOT, "build", "zoo"), help="where the exported models are kept")
    ap.add_argument("--markdown", help="also write the table and the machine's details to this file")
    ap.add_argument("--engines", default="tandem,ort,openvino,torch",
                    help="comma-separated engines to time (PyTorch's output is the error's reference)")
    ap.add_argument("--baseline", metavar="LIBTANDEM",
                    help="also time Tandem from this libtandem.so (another build), side by side")
    ap.add_argument("--baseline-env", metavar="K=V,...",
                    help="environment for the baseline (e.g. OMP_WAIT_POLICY=passive); without --baseline the "
                         "baseline is this build under that environment")
    ap.add_argument("--busy", type=int, default=0, metavar="N",
                    help="keep N cores busy with spinning processes while timing (a loaded machine)")
    ap.add_argument("--quantize", choices=["none", "dynamic", "static"], default="none",
                    help="dynamic: time each export after onnxruntime.quantization.quantize_dynamic (int8 "
                         "weights, MatMulInteger); static: after quantize_static (QDQ, per-channel int8 weights, "
                         "uint8 activations calibrated on the case's inputs); PyTorch stays float32, so the error "
                         "column is each engine's quantization error")
    ap.add_argument("--list", action="store_true", help="list the models and their families")
    ap.add_argument("--worker", nargs=6, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(*args.worker)
        return
    if args.list:
        for name, (family, _, _, large) in MODELS.items():
            print(f"{name:38} {family:12} batches 1, {large}")
        return
    families = args.families.split(",")
    if set(families) - set(FAMILIES):
        sys.exit(f"error: --families takes {', '.join(FAMILIES)}")
    names = args.models.split(",") if args.models else [n for n in MODELS if MODELS[n][0] in families]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        sys.exit(f"error: unknown model(s) {', '.join(unknown)}; bench/zoo.sh --list shows them")
    with_baseline = bool(args.baseline or args.baseline_env)
    engines = [e for e in ENGINES if e in args.engines.split(",") + (["baseline"] if with_baseline else [])]
    if set(args.engines.split(",")) - set(ENGINES) or "baseline" in args.engines.split(",") or "tandem" not in engines:
        sys.exit("error: --engines takes tandem (always), ort, openvino, torch; --baseline LIB or "
                 "--baseline-env K=V adds a baseline")
    if args.baseline and not os.path.isfile(args.baseline):
        sys.exit(f"error: --baseline {args.baseline}: no such file")
    baseline_env = dict(os.environ, **parse_env(args.baseline_env or ""))
    if args.baseline:
        baseline_env["TANDEM_LIBRARY"] = os.path.abspath(args.baseline)
    exporters = args.exporters.split(",")
    if set(exporters) - {"dynamo", "legacy"} or set(args.batches.split(",")) - {"small", "large"}:
        sys.exit("error: --exporters takes dynamo, legacy; --batches takes small, large")
    os.makedirs(args.cache, exist_ok=True)
    slices = max(1, round(args.seconds / args.slice))
    header = [f"{datetime.date.today()}, {cpu_model()} ({vector_isa()}), {os.cpu_count()} cores, {args.threads} threads "
              f"per engine, {args.rounds} rounds of {args.seconds} s per engine and case, "
              f"engines taking turns in slices of {args.seconds / slices:.2g} s", *versions()]
    if with_baseline:
        header.append(f"Tandem baseline: {os.path.abspath(args.baseline) if args.baseline else 'this build'}"
                      + (f" with {args.baseline_env}" if args.baseline_env else ""))
    if args.busy:
        header.append(f"{args.busy} core(s) kept busy by spinning processes while timing")
    for line in header:
        print(line, flush=True)
    keep_cores_busy(args.busy)

    rows, ratios, tandem_failed = [], {}, False
    for name in names:
        family, _, _, large = MODELS[name]
        for exporter in [OWN_EXPORTERS[name][0]] if name in OWN_EXPORTERS else exporters:
            for batch in [b for key, b in (("small", 1), ("large", large)) if key in args.batches]:
                case = f"{name} {exporter} b{batch}"
                path = os.path.join(args.cache, f"{name}.{WEIGHTS}.{exporter}.b{batch}.onnx")
                if not os.path.exists(path):
                    print(f"[zoo] {case}: exporting", file=sys.stderr, flush=True)
                    try:
                        export(name, exporter, batch, path)
                    except Exception as e:  # an exporter's failure is a row, not the end of the run
                        traceback.print_exc(file=sys.stderr)
                        rows.append(f"| {case} | export failed: {first_line(e)} |")
                        continue
                variant = {"none": "", "dynamic": ".int8dyn", "static": ".int8static"}[args.quantize]
                if variant:
                    case += f" int8 {args.quantize}"
                    float_path, path = path, path[:-len(".onnx")] + variant + ".onnx"
                    if not os.path.exists(path):
                        try:
                            if args.quantize == "dynamic":
                                quantize_dynamic(float_path, path)
                            else:
                                quantize_static(float_path, path, MODELS[name][2](batch))
                        except Exception as e:  # a quantizer's failure is a row too
                            traceback.print_exc(file=sys.stderr)
                            rows.append(f"| {case} | quantization failed: {first_line(e)} |")
                            continue
                workers, failed = {}, {}
                for engine in [e for e in engines if not (e == "torch" and name in KERAS)]:  # no module
                    out = os.path.join(args.cache, f"{name}.{WEIGHTS}.{exporter}.b{batch}{variant}.{engine}.out.npy")
                    env = baseline_env if engine == "baseline" else None
                    try:
                        workers[engine] = Worker(
                            [sys.executable, os.path.abspath(__file__), "--worker", engine, name, path, str(batch),
                             str(args.threads), out], f"{ENGINE_NAMES[engine]} on {case}", out + ".stderr", env)
                    except WorkerFailed as failure:
                        failed[engine] = first_line(failure)
                print(f"[zoo] {case}: timing {', '.join(workers)}", file=sys.stderr, flush=True)
                try:
                    p50, _ = take_turns(workers, args.rounds, args.seconds, slices) if workers else ({}, [])
                except (WorkerFailed, ValueError) as failure:  # a worker died or garbled its answer
                    rows.append(f"| {case} | timing failed: {first_line(failure)} |")
                    tandem_failed |= "Tandem" in str(failure).split(" on ")[0]
                    continue
                finally:
                    for w in workers.values():
                        w.close()
                med = {e: statistics.median(v) for e, v in p50.items()}
                cols = [fmt_ms(med[e]) if e in med else f"failed: {failed[e]}" if e in failed else "-" for e in engines]
                vs = [f"{med['tandem'] / med[e]:.2f}" if "tandem" in med and e in med else "-" for e in engines[1:]]
                errors = []
                if "torch" in med or name in KERAS:  # PyTorch's output, or Keras's
                    ref = np.load(keras_reference(float_path if variant else path) if name in KERAS else os.path.join(
                        args.cache, f"{name}.{WEIGHTS}.{exporter}.b{batch}{variant}.torch.out.npy"))
                    scale = float(np.abs(ref).max()) if ref.size else 1.0
                    for e in ("tandem", "ort", "openvino"):
                        if e in med:
                            got = np.load(os.path.join(args.cache, f"{name}.{WEIGHTS}.{exporter}.b{batch}{variant}.{e}.out.npy"))
                            errors.append(("0" if not ref.size else
                                           f"{float(np.abs(got.reshape(ref.shape) - ref).max()) / scale:.1e}")
                                          if got.size == ref.size else "shape differs")
                        else:
                            errors.append("-")
                else:
                    errors = ["-"] * 3
                rows.append(f"| {case} | {' | '.join(cols)} | {' | '.join(vs)} | {' / '.join(errors)} |")
                for e in ("ort", "baseline"):
                    if "tandem" in med and e in med:
                        ratios.setdefault((family, e), []).append(med["tandem"] / med[e])
                tandem_failed |= "tandem" in failed
                print(rows[-1], file=sys.stderr, flush=True)

    table = ["| case | " + " | ".join(f"{ENGINE_NAMES[e]} p50 (ms)" for e in engines) + " | " +
             " | ".join(f"Tandem / {ENGINE_NAMES[e]}" for e in engines[1:]) +
             " | error vs PyTorch (Keras for keras_*) at the output's scale: Tandem / ORT / OpenVINO |",
             "|---|" + "---|" * (2 * len(engines) + 0)] + rows
    summary = [f"- {family}: geometric mean of Tandem / {ENGINE_NAMES[e]} "
               f"{math.exp(statistics.mean(map(math.log, r))):.2f} over {len(r)} cases, worst {max(r):.2f}"
               for (family, e), r in sorted(ratios.items())]
    print("\n".join(table + [""] + summary))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("# The model zoo: Tandem vs ONNX Runtime, OpenVINO and PyTorch (CPU)\n\n")
            f.write("\n".join(f"- {line}" for line in header) + "\n")
            f.write(f"- command: `bench/zoo.sh {' '.join(sys.argv[1:])}`\n\n")
            f.write("\n".join(table) + "\n\n" + "\n".join(summary) + "\n")
        print(f"wrote {args.markdown}")
    return 1 if tandem_failed else 0


if __name__ == "__main__":
    sys.exit(main())
