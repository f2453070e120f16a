// Fused float32 CPU kernels for ndbg's train step on the native ("tensorflow") backend.
//
// tfjs-node runs one TensorFlow eager op per tfjs kernel, and each op is a full pass over its
// tensors plus ~50 µs of fixed cost. These ops do in one pass what the tfjs path does in 3–13:
// RMSNorm, SwiGLU, RoPE, the attention softmax (bias add fused, and its backward with the row
// sums computed in place), the output head's softmax with its log-sum-exp, and AdamW over a list
// of parameters. src/model/native_kernels.ts calls them by name through the addon's executeOp;
// src/model/ops_library.ts builds and loads this file (`ndbg backend install`).
//
// The library is also a (trivial) Node-API addon: process.dlopen() keeps a library loaded only
// when it registers as a module, and loading it is what runs REGISTER_OP / REGISTER_KERNEL_BUILDER
// into the process's TensorFlow registries (the same libtensorflow_framework.so.2 tfjs-node uses).
//
// Every kernel splits its rows over the device's intra-op thread pool (Shard); Eigen array maps
// give vectorised exp/sqrt on the rows.

#include <cmath>
#include <cstdint>
#include <functional>

#include "Eigen/Core"
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "tensorflow/core/util/work_sharder.h"

using tensorflow::OpKernel;
using tensorflow::OpKernelConstruction;
using tensorflow::OpKernelContext;
using tensorflow::Tensor;
using tensorflow::TensorShape;
using tensorflow::shape_inference::InferenceContext;
using Arr = Eigen::Map<Eigen::ArrayXf>;
using CArr = Eigen::Map<const Eigen::ArrayXf>;

namespace {

/** Runs fn(begin, end) over [0, units) on the intra-op pool; `cost` is ~cycles per unit. */
void Parallel(OpKernelContext* ctx, int64_t units, int64_t cost, const std::function<void(int64_t, int64_t)>& fn) {
  auto* w = ctx->device()->tensorflow_cpu_worker_threads();
  tensorflow::Shard(w->num_threads, w->workers, units, cost, fn);
}

/** Allocates output i with `shape`; returns its data or nullptr (the context then holds the error). */
float* Output(OpKernelContext* ctx, int i, const TensorShape& shape) {
  Tensor* out = nullptr;
  const auto status = ctx->allocate_output(i, shape, &out);
  if (!status.ok()) {
    ctx->CtxFailure(__FILE__, __LINE__, status);
    return nullptr;
  }
  return out->flat<float>().data();
}

int64_t LastDim(const Tensor& t) { return t.dims() == 0 ? 1 : t.dim_size(t.dims() - 1); }

tensorflow::Status SameAsInput0(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); i++) c->set_output(i, c->input(0));
  return tensorflow::OkStatus();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// RMSNorm without weight: xhat = x·r, r = (mean(x²) + eps)^(−1/2) per row of the last axis.
REGISTER_OP("NdbgRmsNorm").Input("x: float").Output("xhat: float").Output("r: float").Attr("eps: float").SetShapeFn([](InferenceContext* c) {
  c->set_output(0, c->input(0));
  tensorflow::shape_inference::ShapeHandle r;
  TF_RETURN_IF_ERROR(c->ReplaceDim(c->input(0), -1, c->MakeDim(1), &r));
  c->set_output(1, r);
  return tensorflow::OkStatus();
});

class RmsNormOp : public OpKernel {
 public:
  explicit RmsNormOp(OpKernelConstruction* c) : OpKernel(c) { OP_REQUIRES_OK(c, c->GetAttr("eps", &eps_)); }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    OP_REQUIRES(ctx, x.dims() >= 1, tensorflow::errors::InvalidArgument("NdbgRmsNorm: x must have rank >= 1"));
    const int64_t d = LastDim(x), rows = d ? x.NumElements() / d : 0;
    TensorShape rs = x.shape();
    rs.set_dim(rs.dims() - 1, 1);
    float* xh = Output(ctx, 0, x.shape());
    float* r = Output(ctx, 1, rs);
    if (!xh || !r) return;
    const float* xp = x.flat<float>().data();
    const float eps = eps_;
    Parallel(ctx, rows, 4 * d, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; i++) {
        CArr xi(xp + i * d, d);
        const float ri = 1.0f / std::sqrt(xi.square().sum() / static_cast<float>(d) + eps);
        r[i] = ri;
        Arr(xh + i * d, d) = xi * ri;
      }
    });
  }

 private:
  float eps_;
};
REGISTER_KERNEL_BUILDER(Name("NdbgRmsNorm").Device(tensorflow::DEVICE_CPU), RmsNormOp);

// dx = r·(g − xhat·mean(g·xhat)) per row.
REGISTER_OP("NdbgRmsNormGrad").Input("g: float").Input("xhat: float").Input("r: float").Output("dx: float").SetShapeFn(SameAsInput0);

class RmsNormGradOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor &g = ctx->input(0), &xh = ctx->input(1), &r = ctx->input(2);
    const int64_t d = LastDim(g), rows = d ? g.NumElements() / d : 0;
    OP_REQUIRES(ctx, xh.NumElements() == g.NumElements() && r.NumElements() == rows,
                tensorflow::errors::InvalidArgument("NdbgRmsNormGrad: g, xhat [.., d] and r [.., 1] do not match"));
    float* dx = Output(ctx, 0, g.shape());
    if (!dx) return;
    const float *gp = g.flat<float>().data(), *xp = xh.flat<float>().data(), *rp = r.flat<float>().data();
    Parallel(ctx, rows, 6 * d, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; i++) {
        CArr gi(gp + i * d, d), xi(xp + i * d, d);
        const float m = (gi * xi).sum() / static_cast<float>(d);
        Arr(dx + i * d, d) = rp[i] * (gi - xi * m);
      }
    });
  }
};
REGISTER_KERNEL_BUILDER(Name("NdbgRmsNormGrad").Device(tensorflow::DEVICE_CPU), RmsNormGradOp);

// ---------------------------------------------------------------------------------------------
// SwiGLU y = silu(g)·u; backward recomputes s = sigmoid(g) instead of storing it.
REGISTER_OP("NdbgSwiglu").Input("g: float").Input("u: float").Output("y: float").SetShapeFn(SameAsInput0);
REGISTER_OP("NdbgSwigluGrad").Input("dy: float").Input("g: float").Input("u: float").Output("dg: float").Output("du: float").SetShapeFn(SameAsInput0);

constexpr int64_t kChunk = 4096;

class SwigluOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor &g = ctx->input(0), &u = ctx->input(1);
    OP_REQUIRES(ctx, g.shape() == u.shape(), tensorflow::errors::InvalidArgument("NdbgSwiglu: g and u differ in shape"));
    float* y = Output(ctx, 0, g.shape());
    if (!y) return;
    const float *gp = g.flat<float>().data(), *up = u.flat<float>().data();
    const int64_t n = g.NumElements();
    Parallel(ctx, (n + kChunk - 1) / kChunk, 30 * kChunk, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; c++) {
        const int64_t o = c * kChunk, len = std::min(kChunk, n - o);
        CArr gi(gp + o, len), ui(up + o, len);
        Arr(y + o, len) = gi / (1.0f + (-gi).exp()) * ui;
      }
    });
  }
};
REGISTER_KERNEL_BUILDER(Name("NdbgSwiglu").Device(tensorflow::DEVICE_CPU), SwigluOp);

// du = dy·silu(g)        dg = dy·u·s·(1 + g·(1 − s))
class SwigluGradOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor &dy = ctx->input(0), &g = ctx->input(1), &u = ctx->input(2);
    OP_REQUIRES(ctx, g.shape() == u.shape() && dy.shape() == g.shape(), tensorflow::errors::InvalidArgument("NdbgSwigluGrad: dy, g and u differ in shape"));
    float* dg = Output(ctx, 0, g.shape());
    float* du = Output(ctx, 1, g.shape());
    if (!dg || !du) return;
    const float *dyp = dy.flat<float>().data(), *gp = g.flat<float>().data(), *up = u.flat<float>().data();
    const int64_t n = g.NumElements();
    Parallel(ctx, (n + kChunk - 1) / kChunk, 40 * kChunk, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; c++) {
        const int64_t o = c * kChunk, len = std::min(kChunk, n - o);
        CArr dyi(dyp + o, len), gi(gp + o, len), ui(up + o, len);
        const Eigen::ArrayXf s = 1.0f / (1.0f + (-gi).exp());
        Arr(du + o, len) = dyi * gi * s;
        Arr(dg + o, len) = dyi * ui * s * (1.0f + gi * (1.0f - s));
      }
    });
  }
};
REGISTER_KERNEL_BUILDER(Name("NdbgSwigluGrad").Device(tensorflow::DEVICE_CPU), SwigluGradOp);

// ---------------------------------------------------------------------------------------------
// RoPE in HF's half-split layout: y = x·cos + rotate_half(x)·sin, rotate_half([a, b]) = [−b, a],
// for x [.., T, hd] and cos/sin [T, hd] (each table's two halves are equal). The gradient is
// the same map with sin negated (the rotation's transpose): inverse = true.
REGISTER_OP("NdbgRope").Input("x: float").Input("cos: float").Input("sin: float").Output("y: float").Attr("inverse: bool = false").SetShapeFn(SameAsInput0);

class RopeOp : public OpKernel {
 public:
  explicit RopeOp(OpKernelConstruction* c) : OpKernel(c) { OP_REQUIRES_OK(c, c->GetAttr("inverse", &inverse_)); }
  void Compute(OpKernelContext* ctx) override {
    const Tensor &x = ctx->input(0), &cs = ctx->input(1), &sn = ctx->input(2);
    OP_REQUIRES(ctx, x.dims() >= 2 && cs.dims() == 2 && sn.shape() == cs.shape(), tensorflow::errors::InvalidArgument("NdbgRope: x [.., T, hd], cos and sin [T, hd]"));
    const int64_t hd = x.dim_size(x.dims() - 1), T = x.dim_size(x.dims() - 2);
    OP_REQUIRES(ctx, cs.dim_size(0) == T && cs.dim_size(1) == hd && hd % 2 == 0, tensorflow::errors::InvalidArgument("NdbgRope: cos/sin must be [T, hd] with x's T and an even hd"));
    float* y = Output(ctx, 0, x.shape());
    if (!y) return;
    const float *xp = x.flat<float>().data(), *cp = cs.flat<float>().data(), *sp = sn.flat<float>().data();
    const int64_t rows = hd ? x.NumElements() / hd : 0, h = hd / 2;
    const float sign = inverse_ ? -1.0f : 1.0f;
    Parallel(ctx, rows, 4 * hd, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; i++) {
        const int64_t p = i % T;
        const float *xi = xp + i * hd, *c = cp + p * hd, *s = sp + p * hd;
        float* yi = y + i * hd;
        for (int64_t j = 0; j < h; j++) {
          yi[j] = xi[j] * c[j] - sign * xi[j + h] * s[j];
          yi[j + h] = xi[j + h] * c[j + h] + sign * xi[j] * s[j + h];
        }
      }
    });
  }

 private:
  bool inverse_;
};
REGISTER_KERNEL_BUILDER(Name("NdbgRope").Device(tensorflow::DEVICE_CPU), RopeOp);

// ---------------------------------------------------------------------------------------------
// Attention probabilities P = softmax(s + bias) over the last axis; s [B, H, R, S],
// bias [1|B, 1, R, S] (broadcast over heads, and over the batch when its first dim is 1).
REGISTER_OP("NdbgBiasSoftmax").Input("s: float").Input("bias: float").Output("p: float").SetShapeFn(SameAsInput0);

class BiasSoftmaxOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor &s = ctx->input(0), &bias = ctx->input(1);
    OP_REQUIRES(ctx, s.dims() == 4 && bias.dims() == 4, tensorflow::errors::InvalidArgument("NdbgBiasSoftmax: s and bias must be rank 4"));
    const int64_t B = s.dim_size(0), H = s.dim_size(1), R = s.dim_size(2), S = s.dim_size(3), Bb = bias.dim_size(0);
    OP_REQUIRES(ctx, (Bb == 1 || Bb == B) && bias.dim_size(1) == 1 && bias.dim_size(2) == R && bias.dim_size(3) == S,
                tensorflow::errors::InvalidArgument("NdbgBiasSoftmax: bias must be [1|B, 1, R, S] for s [B, H, R, S]"));
    float* p = Output(ctx, 0, s.shape());
    if (!p) return;
    const float *sp = s.flat<float>().data(), *bp = bias.flat<float>().data();
    Parallel(ctx, B * H * R, 12 * S, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; i++) {
        const int64_t bi = Bb == 1 ? 0 : i / (H * R);
        CArr si(sp + i * S, S), bb(bp + (bi * R + i % R) * S, S);
        Arr pi(p + i * S, S);
        pi = si + bb;
        pi = (pi - pi.maxCoeff()).exp();
        pi *= 1.0f / pi.sum();
      }
    });
  }
};
REGISTER_KERNEL_BUILDER(Name("NdbgBiasSoftmax").Device(tensorflow::DEVICE_CPU), BiasSoftmaxOp);

// Softmax backward over the last axis: ds = p·(dp − Σ p·dp).
REGISTER_OP("NdbgSoftmaxGrad").Input("p: float").Input("dp: float").Output("ds: float").SetShapeFn(SameAsInput0);

class SoftmaxGradOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor &p = ctx->input(0), &dp = ctx->input(1);
    OP_REQUIRES(ctx, p.shape() == dp.shape() && p.dims() >= 1, tensorflow::errors::InvalidArgument("NdbgSoftmaxGrad: p and dp differ in shape"));
    float* ds = Output(ctx, 0, p.shape());
    if (!ds) return;
    const int64_t S = LastDim(p), rows = S ? p.NumElements() / S : 0;
    const float *pp = p.flat<float>().data(), *dpp = dp.flat<float>().data();
    Parallel(ctx, rows, 4 * S, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; i++) {
        CArr pi(pp + i * S, S), di(dpp + i * S, S);
        const float sum = (pi * di).sum();
        Arr(ds + i * S, S) = pi * (di - sum);
      }
    });
  }
};
REGISTER_KERNEL_BUILDER(Name("NdbgSoftmaxGrad").Device(tensorflow::DEVICE_CPU), SoftmaxGradOp);

// ---------------------------------------------------------------------------------------------
// The output head's softmax P [N, V] and log-sum-exp lse [N] of logits [N, V] in one pass.
REGISTER_OP("NdbgSoftmaxLse").Input("logits: float").Output("p: float").Output("lse: float").SetShapeFn([](InferenceContext* c) {
  c->set_output(0, c->input(0));
  c->set_output(1, c->Vector(c->Dim(c->input(0), 0)));
  return tensorflow::OkStatus();
});

class SoftmaxLseOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    OP_REQUIRES(ctx, x.dims() == 2, tensorflow::errors::InvalidArgument("NdbgSoftmaxLse: logits must be [N, V]"));
    const int64_t N = x.dim_size(0), V = x.dim_size(1);
    float* p = Output(ctx, 0, x.shape());
    float* lse = Output(ctx, 1, TensorShape({N}));
    if (!p || !lse) return;
    const float* xp = x.flat<float>().data();
    Parallel(ctx, N, 12 * V, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; i++) {
        CArr xi(xp + i * V, V);
        Arr pi(p + i * V, V);
        const float m = xi.maxCoeff();
        pi = (xi - m).exp();
        const float sum = pi.sum();
        pi *= 1.0f / sum;
        lse[i] = m + std::log(sum);
      }
    });
  }
};
REGISTER_KERNEL_BUILDER(Name("NdbgSoftmaxLse").Device(tensorflow::DEVICE_CPU), SoftmaxLseOp);

// ---------------------------------------------------------------------------------------------
// AdamW over N parameters whose gradients, m and v are one flat vector each (in the order of
// the list). coefs = [β1, c1, β2, c2, step, epsTerm, decay]:
//   m ← β1·m + c1·g      v ← β2·v + c2·g²      p ← p·decay − step·m / (√v + epsTerm)
// (the caller folds lr, bias corrections, token scale and clipping into them; src/train/adamw.ts).
REGISTER_OP("NdbgAdamW")
    .Input("params: N * float")
    .Input("m: float")
    .Input("v: float")
    .Input("g: float")
    .Input("coefs: float")
    .Output("new_params: N * float")
    .Output("new_m: float")
    .Output("new_v: float")
    .Attr("N: int >= 1")
    .SetShapeFn([](InferenceContext* c) {
      int n = c->num_outputs() - 2;
      for (int i = 0; i < n; i++) c->set_output(i, c->input(i));
      c->set_output(n, c->input(n));
      c->set_output(n + 1, c->input(n + 1));
      return tensorflow::OkStatus();
    });

class AdamWOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    tensorflow::OpInputList params;
    OP_REQUIRES_OK(ctx, ctx->input_list("params", &params));
    const int n = params.size();
    const Tensor &m = ctx->input(n), &v = ctx->input(n + 1), &g = ctx->input(n + 2), &coefs = ctx->input(n + 3);
    int64_t total = 0;
    for (int i = 0; i < n; i++) total += params[i].NumElements();
    OP_REQUIRES(ctx, m.NumElements() == total && v.NumElements() == total && g.NumElements() == total,
                tensorflow::errors::InvalidArgument("NdbgAdamW: m, v and g must hold as many values as the parameters together"));
    OP_REQUIRES(ctx, coefs.NumElements() == 7, tensorflow::errors::InvalidArgument("NdbgAdamW: coefs must hold 7 values"));
    const float* k = coefs.flat<float>().data();
    const float b1 = k[0], c1 = k[1], b2 = k[2], c2 = k[3], step = k[4], epsTerm = k[5], decay = k[6];
    float* mo = Output(ctx, n, m.shape());
    float* vo = Output(ctx, n + 1, v.shape());
    if (!mo || !vo) return;
    const float *mp = m.flat<float>().data(), *vp = v.flat<float>().data(), *gp = g.flat<float>().data();
    int64_t offset = 0;
    for (int i = 0; i < n; i++) {
      float* po = Output(ctx, i, params[i].shape());
      if (!po) return;
      const float* pp = params[i].flat<float>().data();
      const int64_t size = params[i].NumElements(), base = offset;
      Parallel(ctx, (size + kChunk - 1) / kChunk, 20 * kChunk, [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; c++) {
          const int64_t o = c * kChunk, len = std::min(kChunk, size - o), f = base + o;
          CArr gi(gp + f, len);
          Arr mi(mo + f, len), vi(vo + f, len);
          mi = CArr(mp + f, len) * b1 + gi * c1;
          vi = CArr(vp + f, len) * b2 + gi.square() * c2;
          Arr(po + o, len) = CArr(pp + o, len) * decay - (mi * step) / (vi.sqrt() + epsTerm);
        }
      });
      offset += size;
    }
  }
};
REGISTER_KERNEL_BUILDER(Name("NdbgAdamW").Device(tensorflow::DEVICE_CPU), AdamWOp);

// ---------------------------------------------------------------------------------------------
// Node-API entry point: lets process.dlopen() load (and keep) this library. Declared without
// node_api.h (opaque handles): it only returns the exports object it is given.
extern "C" __attribute__((visibility("default"))) void* napi_register_module_v1(void* /*env*/, void* exports) { return exports; }
