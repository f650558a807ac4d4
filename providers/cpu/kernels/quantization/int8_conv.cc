#include "providers/cpu/kernels/quantization/int8_conv.h"

#include <cstring>
#include <string>

namespace tandem::cpu {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

dt Dnnl8Bit(DataType t) { return t == DataType::kUint8 ? dt::u8 : dt::s8; }

dnnl::memory::desc Desc4(const Dims& d, DataType t, bool channels_last) {
  return dnnl::memory::desc(ToDnnlDims(d), Dnnl8Bit(t), channels_last ? tag::nhwc : tag::nchw);
}

dnnl::memory::desc ZeroPointDesc() { return dnnl::memory::desc({1}, dt::s32, tag::x); }

}  // namespace

absl::Status ReorderChannels8Bit(const void* src, bool src_channels_last, void* dst, DataType type,
                                 const Dims& dims) {
  try {
    auto& eng = DnnlEngine();
    dnnl::memory s(Desc4(dims, type, src_channels_last), eng, const_cast<void*>(src));
    dnnl::memory d(Desc4(dims, type, !src_channels_last), eng, dst);
    dnnl::reorder(s, d).execute(DnnlStream(), s, d);
    DnnlStream().wait();
  } catch (const dnnl::error& err) {
    return absl::InternalError(std::string("oneDNN reorder failed: ") + err.what());
  }
  return absl::OkStatus();
}

absl::Status Int8Conv::Run(const void* x, DataType x_type, const Dims& x_dims, bool x_channels_last, int32_t x_zp,
                           const Tensor& w, int64_t group, const Tensor* bias, const std::vector<float>& scales,
                           int32_t y_zp, Tensor& y, bool y_channels_last, const WindowGeometry& geo) {
  const int64_t M = w.dim(0);
  const Dims y_dims = {x_dims[0], M, geo.out[0], geo.out[1]};
  try {
    const Dims key_flags = {static_cast<int64_t>(x_type), static_cast<int64_t>(y.dtype()), x_channels_last,
                            y_channels_last, bias ? 1 : 0, x_zp != 0, y_zp != 0};
    Primitive* found = &cache_.Get({x_dims, key_flags}, [] { return Primitive{}; });
    Primitive& e = *found;
    if (!e.prim || e.scales != scales) {
      auto& eng = DnnlEngine();
      e = Primitive{};
      e.scales = scales;
      e.x_md = Desc4(x_dims, x_type, x_channels_last);
      e.y_md = Desc4(y_dims, y.dtype(), y_channels_last);
      Dims wd = w.dims();
      if (group > 1) {
        wd = {group, M / group};
        wd.insert(wd.end(), w.dims().begin() + 1, w.dims().end());
      }
      const dnnl::memory::desc w_md = PlainDesc(wd, dt::s8);
      const dnnl::memory::desc b_md = bias ? dnnl::memory::desc({M}, dt::s32, tag::x) : dnnl::memory::desc();
      dnnl::primitive_attr attr;
      attr.set_output_scales(scales.size() == 1 ? 0 : 1 << 1, scales);
      if (x_zp) attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
      if (y_zp) attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
      dnnl::memory::dims dil;
      for (int64_t d : geo.dilations) dil.push_back(d - 1);
      auto make_pd = [&](bool as_stored) {
        dnnl::convolution_forward::desc d(
            dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
            as_stored && x_channels_last ? e.x_md : AnyLayout(e.x_md), AnyLayout(w_md), b_md,
            as_stored && y_channels_last ? e.y_md : AnyLayout(e.y_md),
            dnnl::memory::dims(geo.strides.begin(), geo.strides.end()), dil,
            dnnl::memory::dims(geo.pads_begin.begin(), geo.pads_begin.end()),
            dnnl::memory::dims(geo.pads_end.begin(), geo.pads_end.end()));
        return dnnl::convolution_forward::primitive_desc(d, attr, eng);
      };
      dnnl::convolution_forward::primitive_desc pd;
      try {
        pd = make_pd(true);
        if (std::strncmp(pd.impl_info_str(), "ref", 3) == 0) pd = make_pd(false);
      } catch (const dnnl::error&) {
        pd = make_pd(false);
      }
      e.prim = dnnl::convolution_forward(pd);
      e.x_view = UnboundMemory(e.x_md);
      e.y_view = UnboundMemory(e.y_md);
      if (pd.src_desc() != e.x_md) {
        e.x_buf = HostMemory(pd.src_desc(), e.x_mem);
        e.x_re = dnnl::reorder(dnnl::reorder::primitive_desc(eng, e.x_md, eng, pd.src_desc()));
      }
      if (pd.dst_desc() != e.y_md) {
        e.y_buf = HostMemory(pd.dst_desc(), e.y_mem);
        e.y_re = dnnl::reorder(dnnl::reorder::primitive_desc(eng, pd.dst_desc(), eng, e.y_md));
      }
      e.w_packed = PackConstantWeights(w.Reshaped(wd), w_md, pd.weights_desc());
      e.args = {{DNNL_ARG_SRC, e.x_re ? e.x_buf : e.x_view},
                {DNNL_ARG_WEIGHTS, e.w_packed->memory},
                {DNNL_ARG_DST, e.y_re ? e.y_buf : e.y_view}};
      if (bias) e.args[DNNL_ARG_BIAS] = e.b_view = UnboundMemory(b_md);
      if (x_zp) e.args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC] = e.x_zp_mem = dnnl::memory(ZeroPointDesc(), eng, &e.x_zp);
      if (y_zp) e.args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST] = e.y_zp_mem = dnnl::memory(ZeroPointDesc(), eng, &e.y_zp);
    }
    e.x_zp = x_zp;
    e.y_zp = y_zp;
    PointAt(e.x_view, x);
    PointAt(e.y_view, y.raw());
    if (bias) PointAt(e.b_view, bias->raw());
    auto& s = DnnlStream();
    if (e.x_re) e.x_re->execute(s, e.x_view, e.x_buf);
    e.prim.execute(s, e.args);
    if (e.y_re) e.y_re->execute(s, e.y_buf, e.y_view);
    s.wait();
  } catch (const dnnl::error& err) {
    return absl::InternalError(std::string("oneDNN int8 convolution failed: ") + err.what());
  }
  return absl::OkStatus();
}

}  // namespace tandem::cpu
