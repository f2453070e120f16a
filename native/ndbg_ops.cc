// Fused float32 CPU kernels for ndbg's train step on the native ("tensorflow") backend.
//
// tfjs-node runs one TensorFlow eager op per tfjs kernel, and each op is a full pass over its
// tensors plus ~50 µs of fixed cost. These ops do in one pass what the tfjs path does in 3–13:
// RMSNorm, SwiGLU, RoPE, the q/k/v head split with RoPE, causal attention (products, masked softmax and layout in cache-sized
// tiles), the output head's cross-entropy with its gradient, the document-mask bias, AdamW over a
// list of parameters and Σx². Part of the backend stage (src/backend/): fused_ops.ts calls the ops
// by name (NdbgRmsNorm, ...) through the addon's executeOp and loads the library; fused_build.ts
// compiles this file during `ndbg backend install`; fused_kernels.ts is the kernel set that uses them.
//
// The library is also a (trivial) Node-API addon: process.dlopen() keeps a library loaded only
// when it registers as a module, and loading it is what runs REGISTER_OP / REGISTER_KERNEL_BUILDER
// into the process's TensorFlow registries (the same libtensorflow_framework.so.2 tfjs-node uses).
//
// Every kernel splits its rows over the device's intra-op thread pool (Shard); Eigen array maps
// give vectorised exp/sqrt on the rows.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

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

void SwigluSpan(const float* g, const float* u, float* y, int64_t len) {
  CArr gi(g, len), ui(u, len);
  Arr(y, len) = gi / (1.0f + (-gi).exp()) * ui;
}

void SwigluGradSpan(const float* dy, const float* g, const float* u, float* dg, float* du, int64_t len) {
  CArr dyi(dy, len), gi(g, len), ui(u, len);
  const Eigen::ArrayXf s = 1.0f / (1.0f + (-gi).exp());
  Arr(du, len) = dyi * gi * s;
  Arr(dg, len) = dyi * ui * s * (1.0f + gi * (1.0f - s));
}

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
        SwigluSpan(gp + o, up + o, y + o, len);
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
        SwigluGradSpan(dyp + o, gp + o, up + o, dg + o, du + o, len);
      }
    });
  }
};
REGISTER_KERNEL_BUILDER(Name("NdbgSwigluGrad").Device(tensorflow::DEVICE_CPU), SwigluGradOp);

// The same on one [N, 2f] product of the concatenated gate and up weights, g = gu[:, :f] and
// u = gu[:, f:]: one MatMul each way instead of two (and no Add of the two input gradients),
// with no split of the product nor concat of its gradient.
REGISTER_OP("NdbgSwigluPacked").Input("gu: float").Output("y: float").SetShapeFn([](InferenceContext* c) {
  tensorflow::shape_inference::DimensionHandle f;
  TF_RETURN_IF_ERROR(c->Divide(c->Dim(c->input(0), 1), 2, true, &f));
  c->set_output(0, c->Matrix(c->Dim(c->input(0), 0), f));
  return tensorflow::OkStatus();
});
REGISTER_OP("NdbgSwigluPackedGrad").Input("dy: float").Input("gu: float").Output("dgu: float").SetShapeFn([](InferenceContext* c) {
  c->set_output(0, c->input(1));
  return tensorflow::OkStatus();
});

bool PackedShape(OpKernelContext* ctx, const Tensor& gu, int64_t* n, int64_t* f) {
  if (gu.dims() != 2 || gu.dim_size(1) % 2 != 0) {
    ctx->CtxFailure(__FILE__, __LINE__, tensorflow::errors::InvalidArgument("NdbgSwigluPacked: gu must be [N, 2·f]"));
    return false;
  }
  *n = gu.dim_size(0), *f = gu.dim_size(1) / 2;
  return true;
}

class SwigluPackedOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& gu = ctx->input(0);
    int64_t n, f;
    if (!PackedShape(ctx, gu, &n, &f)) return;
    float* y = Output(ctx, 0, TensorShape({n, f}));
    if (!y) return;
    const float* gp = gu.flat<float>().data();
    Parallel(ctx, n, 30 * f, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; r++) SwigluSpan(gp + r * 2 * f, gp + r * 2 * f + f, y + r * f, f);
    });
  }
};
REGISTER_KERNEL_BUILDER(Name("NdbgSwigluPacked").Device(tensorflow::DEVICE_CPU), SwigluPackedOp);

class SwigluPackedGradOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor &dy = ctx->input(0), &gu = ctx->input(1);
    int64_t n, f;
    if (!PackedShape(ctx, gu, &n, &f)) return;
    OP_REQUIRES(ctx, dy.dims() == 2 && dy.dim_size(0) == n && dy.dim_size(1) == f,
                tensorflow::errors::InvalidArgument("NdbgSwigluPackedGrad: dy must be [N, f] for gu [N, 2·f]"));
    float* dgu = Output(ctx, 0, gu.shape());
    if (!dgu) return;
    const float *dyp = dy.flat<float>().data(), *gp = gu.flat<float>().data();
    Parallel(ctx, n, 40 * f, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; r++) {
        const int64_t o = r * 2 * f;
        SwigluGradSpan(dyp + r * f, gp + o, gp + o + f, dgu + o, dgu + o + f, f);
      }
    });
  }
};
REGISTER_KERNEL_BUILDER(Name("NdbgSwigluPackedGrad").Device(tensorflow::DEVICE_CPU), SwigluPackedGradOp);

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
        CArr x1(xi, h), x2(xi + h, h);
        Arr(y + i * hd, h) = x1 * CArr(c, h) - sign * x2 * CArr(s, h);
        Arr(y + i * hd + h, h) = x2 * CArr(c + h, h) + sign * x1 * CArr(s + h, h);
      }
    });
  }

 private:
  bool inverse_;
};
REGISTER_KERNEL_BUILDER(Name("NdbgRope").Device(tensorflow::DEVICE_CPU), RopeOp);

// ---------------------------------------------------------------------------------------------
// The q/k/v product's output y [B·T, (H + 2·Hkv)·hd] (columns: the H query heads, the Hkv key
// heads, the Hkv value heads) as heads [B, H + 2·Hkv, T, hd] in the same order, with RoPE (as
// NdbgRope, the same arithmetic) on the query and key heads. One pass instead of a reshape, a
// transpose, a split and a rope (and their gradients). NdbgQkvHeadsGrad is the transpose: the
// heads' gradient back into y's layout, with the inverse rotation on the query and key heads.
REGISTER_OP("NdbgQkvHeads").Input("y: float").Input("cos: float").Input("sin: float").Output("heads: float").Attr("n_heads: int >= 1").Attr("n_kv_heads: int >= 1");
REGISTER_OP("NdbgQkvHeadsGrad").Input("dheads: float").Input("cos: float").Input("sin: float").Output("dy: float").Attr("n_heads: int >= 1").Attr("n_kv_heads: int >= 1");

namespace {

/** Rotates one head row of hd values (sign −1: the inverse rotation), or copies it. */
inline void RopeRow(const float* src, float* dst, const float* c, const float* s, int64_t hd, bool rope, float sign) {
  if (!rope) {
    std::copy(src, src + hd, dst);
    return;
  }
  const int64_t h = hd / 2;
  CArr x1(src, h), x2(src + h, h);
  Arr(dst, h) = x1 * CArr(c, h) - sign * x2 * CArr(s, h);
  Arr(dst + h, h) = x2 * CArr(c + h, h) + sign * x1 * CArr(s + h, h);
}

/** The shared shape checks and the row mapping of both directions (toHeads: y → heads). */
class QkvHeadsBase : public OpKernel {
 public:
  explicit QkvHeadsBase(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("n_heads", &H_));
    OP_REQUIRES_OK(c, c->GetAttr("n_kv_heads", &Hkv_));
  }

 protected:
  void Map(OpKernelContext* ctx, bool toHeads) {
    const Tensor &in = ctx->input(0), &cs = ctx->input(1), &sn = ctx->input(2);
    const int64_t H = H_, Hkv = Hkv_, blocks = H + 2 * Hkv;
    OP_REQUIRES(ctx, cs.dims() == 2 && sn.shape() == cs.shape() && cs.dim_size(0) > 0 && cs.dim_size(1) % 2 == 0,
                tensorflow::errors::InvalidArgument("NdbgQkvHeads: cos/sin must be [T, hd] with an even hd"));
    const int64_t T = cs.dim_size(0), hd = cs.dim_size(1), C = blocks * hd;
    if (toHeads) {
      OP_REQUIRES(ctx, in.dims() == 2 && in.dim_size(1) == C && in.dim_size(0) % T == 0,
                  tensorflow::errors::InvalidArgument("NdbgQkvHeads: y must be [B·T, (H + 2·Hkv)·hd]"));
    } else {
      OP_REQUIRES(ctx, in.dims() == 4 && in.dim_size(1) == blocks && in.dim_size(2) == T && in.dim_size(3) == hd,
                  tensorflow::errors::InvalidArgument("NdbgQkvHeadsGrad: dheads must be [B, H + 2·Hkv, T, hd]"));
    }
    const int64_t B = toHeads ? in.dim_size(0) / T : in.dim_size(0);
    float* out = Output(ctx, 0, toHeads ? TensorShape({B, blocks, T, hd}) : TensorShape({B * T, C}));
    if (!out) return;
    const float *ip = in.flat<float>().data(), *cp = cs.flat<float>().data(), *sp = sn.flat<float>().data();
    Parallel(ctx, B * blocks, 6 * T * hd, [&](int64_t b0, int64_t e0) {
      for (int64_t u = b0; u < e0; u++) {
        const int64_t b = u / blocks, j = u % blocks;
        const bool rope = j < H + Hkv;
        for (int64_t t = 0; t < T; t++) {
          const int64_t yrow = (b * T + t) * C + j * hd, hrow = (u * T + t) * hd;
          if (toHeads) RopeRow(ip + yrow, out + hrow, cp + t * hd, sp + t * hd, hd, rope, 1.0f);
          else RopeRow(ip + hrow, out + yrow, cp + t * hd, sp + t * hd, hd, rope, -1.0f);
        }
      }
    });
  }

 private:
  int H_, Hkv_;
};

}  // namespace

class QkvHeadsOp : public QkvHeadsBase {
 public:
  using QkvHeadsBase::QkvHeadsBase;
  void Compute(OpKernelContext* ctx) override { Map(ctx, true); }
};
REGISTER_KERNEL_BUILDER(Name("NdbgQkvHeads").Device(tensorflow::DEVICE_CPU), QkvHeadsOp);

class QkvHeadsGradOp : public QkvHeadsBase {
 public:
  using QkvHeadsBase::QkvHeadsBase;
  void Compute(OpKernelContext* ctx) override { Map(ctx, false); }
};
REGISTER_KERNEL_BUILDER(Name("NdbgQkvHeadsGrad").Device(tensorflow::DEVICE_CPU), QkvHeadsGradOp);

// ---------------------------------------------------------------------------------------------
// The output head's weighted cross-entropy from logits [N, V], targets [N] and per-row scales
// [N] (weight/Σw or the weight): loss = Σ scale·(lse − logits[t]) and its gradient
// G = (softmax − onehot(t))·scale in the same pass, so the backward is two products with G and
// nothing else touches [N, V]. Row losses are summed in double, in row order (deterministic).
REGISTER_OP("NdbgSoftmaxXent").Input("logits: float").Input("targets: int32").Input("scale: float").Output("loss: float").Output("grad: float");

class SoftmaxXentOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor &x = ctx->input(0), &t = ctx->input(1), &sc = ctx->input(2);
    OP_REQUIRES(ctx, x.dims() == 2 && t.NumElements() == x.dim_size(0) && sc.NumElements() == x.dim_size(0),
                tensorflow::errors::InvalidArgument("NdbgSoftmaxXent: logits [N, V], targets and scale [N]"));
    const int64_t N = x.dim_size(0), V = x.dim_size(1);
    float* loss = Output(ctx, 0, TensorShape({}));
    float* grad = Output(ctx, 1, x.shape());
    if (!loss || !grad) return;
    const float *xp = x.flat<float>().data(), *sp = sc.flat<float>().data();
    const int32_t* tp = t.flat<int32_t>().data();
    for (int64_t i = 0; i < N; i++) OP_REQUIRES(ctx, tp[i] >= 0 && tp[i] < V, tensorflow::errors::InvalidArgument("NdbgSoftmaxXent: target outside the vocabulary"));
    std::vector<double> rowLoss(N);
    Parallel(ctx, N, 12 * V, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; i++) {
        CArr xi(xp + i * V, V);
        Arr gi(grad + i * V, V);
        const float m = xi.maxCoeff();
        gi = (xi - m).exp();
        const float sum = gi.sum();
        gi *= sp[i] / sum;
        grad[i * V + tp[i]] -= sp[i];
        rowLoss[i] = static_cast<double>(sp[i]) * (static_cast<double>(m) + std::log(static_cast<double>(sum)) - static_cast<double>(xp[i * V + tp[i]]));
      }
    });
    double total = 0;
    for (int64_t i = 0; i < N; i++) total += rowLoss[i];
    *loss = static_cast<float>(total);
  }
};
REGISTER_KERNEL_BUILDER(Name("NdbgSoftmaxXent").Device(tensorflow::DEVICE_CPU), SoftmaxXentOp);

// ---------------------------------------------------------------------------------------------
// AdamW over N parameters with their N gradients; m and v are one flat vector each (the
// parameters' values in list order), so nothing is concatenated or split per step. coefs = [β1, c1, β2, c2, step, epsTerm, decay]:
//   m ← β1·m + c1·g      v ← β2·v + c2·g²      p ← p·decay − step·m / (√v + epsTerm)
// (the caller folds lr, bias corrections, token scale and clipping into them; src/train/adamw.ts).
REGISTER_OP("NdbgAdamW")
    .Input("params: N * float")
    .Input("m: float")
    .Input("v: float")
    .Input("g: N * float")
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
    tensorflow::OpInputList grads;
    OP_REQUIRES_OK(ctx, ctx->input_list("g", &grads));
    const Tensor &m = ctx->input(n), &v = ctx->input(n + 1), &coefs = ctx->input(2 * n + 2);
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
      OP_REQUIRES(ctx, grads[i].NumElements() == params[i].NumElements(), tensorflow::errors::InvalidArgument("NdbgAdamW: a gradient differs in size from its parameter"));
      total += params[i].NumElements();
    }
    OP_REQUIRES(ctx, m.NumElements() == total && v.NumElements() == total,
                tensorflow::errors::InvalidArgument("NdbgAdamW: m and v must hold as many values as the parameters together"));
    OP_REQUIRES(ctx, coefs.NumElements() == 7, tensorflow::errors::InvalidArgument("NdbgAdamW: coefs must hold 7 values"));
    const float* k = coefs.flat<float>().data();
    const float b1 = k[0], c1 = k[1], b2 = k[2], c2 = k[3], step = k[4], epsTerm = k[5], decay = k[6];
    float* mo = Output(ctx, n, m.shape());
    float* vo = Output(ctx, n + 1, v.shape());
    if (!mo || !vo) return;
    const float *mp = m.flat<float>().data(), *vp = v.flat<float>().data();
    int64_t offset = 0;
    for (int i = 0; i < n; i++) {
      float* po = Output(ctx, i, params[i].shape());
      if (!po) return;
      const float *pp = params[i].flat<float>().data(), *gp = grads[i].flat<float>().data();
      const int64_t size = params[i].NumElements(), base = offset;
      Parallel(ctx, (size + kChunk - 1) / kChunk, 20 * kChunk, [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; c++) {
          const int64_t o = c * kChunk, len = std::min(kChunk, size - o), f = base + o;
          CArr gi(gp + o, len);
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
// Causal attention for one layer, forward and backward, without the [B, H, T, S] intermediates
// leaving the cache: per (batch, kv head) block, in row tiles of the query axis, only the keys a
// tile can see (key j ≤ t + S − T for query t: the causal mask, which every bias ndbg builds
// includes) enter the products. q [B, H, T, hd] (already scaled), k, v [B, Hkv, S, hd],
// bias [1|B, 1, g·T, S] with g = H / Hkv (query head h uses kv head ⌊h/g⌋). Outputs
// out [B·T, H·hd] (o_proj's input layout) and the probabilities P [B, Hkv, g·T, S] (zero where
// masked) for the backward:
//   dV = Pᵀ·dO    dP = dO·Vᵀ    dS = P·(dP − Σ_row P·dP)    dQ = dS·K    dK = dSᵀ·Q
using RMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapM = Eigen::Map<RMat, 0, Eigen::OuterStride<>>;
using CMapM = Eigen::Map<const RMat, 0, Eigen::OuterStride<>>;
// Query rows per tile: 64 ran as fast as 32 at hd = 32 and ~25% faster at hd = 64; 128 was
// slower at both (fewer masked keys skipped, larger score blocks).
constexpr int64_t kRowTile = 64;

struct AttnDims {
  int64_t B, H, Hkv, g, T, S, hd, Bb, off;
};

bool AttnShapes(OpKernelContext* ctx, const Tensor& q, const Tensor& k, const Tensor& v, AttnDims* d) {
  if (q.dims() != 4 || k.dims() != 4 || v.shape() != k.shape() || k.dim_size(0) != q.dim_size(0) || k.dim_size(3) != q.dim_size(3)) {
    ctx->CtxFailure(__FILE__, __LINE__, tensorflow::errors::InvalidArgument("NdbgAttention: q [B, H, T, hd], k and v [B, Hkv, S, hd]"));
    return false;
  }
  d->B = q.dim_size(0), d->H = q.dim_size(1), d->T = q.dim_size(2), d->hd = q.dim_size(3);
  d->Hkv = k.dim_size(1), d->S = k.dim_size(2);
  if (d->Hkv == 0 || d->H % d->Hkv != 0 || d->S < d->T) {
    ctx->CtxFailure(__FILE__, __LINE__, tensorflow::errors::InvalidArgument("NdbgAttention: H must be a multiple of Hkv and S >= T"));
    return false;
  }
  d->g = d->H / d->Hkv;
  d->off = d->S - d->T;
  return true;
}

REGISTER_OP("NdbgAttention").Input("q: float").Input("k: float").Input("v: float").Input("bias: float").Output("out: float").Output("p: float");

class AttentionOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor &q = ctx->input(0), &k = ctx->input(1), &v = ctx->input(2), &bias = ctx->input(3);
    AttnDims d;
    if (!AttnShapes(ctx, q, k, v, &d)) return;
    const int64_t B = d.B, H = d.H, Hkv = d.Hkv, g = d.g, T = d.T, S = d.S, hd = d.hd, off = d.off;
    OP_REQUIRES(ctx, bias.dims() == 4 && (bias.dim_size(0) == 1 || bias.dim_size(0) == B) && bias.dim_size(1) == 1 && bias.dim_size(2) == g * T && bias.dim_size(3) == S,
                tensorflow::errors::InvalidArgument("NdbgAttention: bias must be [1|B, 1, g·T, S]"));
    const int64_t Bb = bias.dim_size(0);
    float* out = Output(ctx, 0, TensorShape({B * T, H * hd}));
    float* p = Output(ctx, 1, TensorShape({B, Hkv, g * T, S}));
    if (!out || !p) return;
    const float *qp = q.flat<float>().data(), *kp = k.flat<float>().data(), *vp = v.flat<float>().data(), *bp = bias.flat<float>().data();
    Parallel(ctx, B * Hkv, 4 * g * T * S * hd, [&](int64_t b0, int64_t e0) {
      for (int64_t blk = b0; blk < e0; blk++) {
        const int64_t b = blk / Hkv, kvh = blk % Hkv;
        CMapM K(kp + blk * S * hd, S, hd, Eigen::OuterStride<>(hd));
        CMapM V(vp + blk * S * hd, S, hd, Eigen::OuterStride<>(hd));
        for (int64_t j = 0; j < g; j++) {
          const int64_t h = kvh * g + j;
          const float* qh = qp + (b * H + h) * T * hd;
          float* ph = p + (blk * g + j) * T * S;
          const float* bh = bp + ((Bb == 1 ? 0 : b) * g + j) * T * S;
          for (int64_t r0 = 0; r0 < T; r0 += kRowTile) {
            const int64_t rows = std::min(kRowTile, T - r0), keys = std::min(S, r0 + rows + off);
            MapM P(ph + r0 * S, rows, keys, Eigen::OuterStride<>(S));
            P.noalias() = CMapM(qh + r0 * hd, rows, hd, Eigen::OuterStride<>(hd)) * K.topRows(keys).transpose();
            for (int64_t i = 0; i < rows; i++) {
              Arr row(ph + (r0 + i) * S, keys);
              row += CArr(bh + (r0 + i) * S, keys);
              row = (row - row.maxCoeff()).exp();
              row *= 1.0f / row.sum();
              std::fill(ph + (r0 + i) * S + keys, ph + (r0 + i + 1) * S, 0.0f);
            }
            MapM O(out + (b * T + r0) * H * hd + h * hd, rows, hd, Eigen::OuterStride<>(H * hd));
            O.noalias() = P * V.topRows(keys);
          }
        }
      }
    });
  }
};
REGISTER_KERNEL_BUILDER(Name("NdbgAttention").Device(tensorflow::DEVICE_CPU), AttentionOp);

REGISTER_OP("NdbgAttentionGrad")
    .Input("dout: float")
    .Input("q: float")
    .Input("k: float")
    .Input("v: float")
    .Input("p: float")
    .Output("dq: float")
    .Output("dk: float")
    .Output("dv: float");

class AttentionGradOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor &dout = ctx->input(0), &q = ctx->input(1), &k = ctx->input(2), &v = ctx->input(3), &pt = ctx->input(4);
    AttnDims d;
    if (!AttnShapes(ctx, q, k, v, &d)) return;
    const int64_t B = d.B, H = d.H, Hkv = d.Hkv, g = d.g, T = d.T, S = d.S, hd = d.hd, off = d.off;
    OP_REQUIRES(ctx, dout.NumElements() == B * T * H * hd && pt.NumElements() == B * Hkv * g * T * S,
                tensorflow::errors::InvalidArgument("NdbgAttentionGrad: dout must be [B·T, H·hd] and p [B, Hkv, g·T, S]"));
    float* dq = Output(ctx, 0, q.shape());
    float* dk = Output(ctx, 1, k.shape());
    float* dv = Output(ctx, 2, v.shape());
    if (!dq || !dk || !dv) return;
    const float *dop = dout.flat<float>().data(), *qp = q.flat<float>().data(), *kp = k.flat<float>().data(), *vp = v.flat<float>().data(), *pp = pt.flat<float>().data();
    Parallel(ctx, B * Hkv, 8 * g * T * S * hd, [&](int64_t b0, int64_t e0) {
      RMat dP(kRowTile, S);
      for (int64_t blk = b0; blk < e0; blk++) {
        const int64_t b = blk / Hkv;
        CMapM K(kp + blk * S * hd, S, hd, Eigen::OuterStride<>(hd));
        CMapM V(vp + blk * S * hd, S, hd, Eigen::OuterStride<>(hd));
        MapM dK(dk + blk * S * hd, S, hd, Eigen::OuterStride<>(hd));
        MapM dV(dv + blk * S * hd, S, hd, Eigen::OuterStride<>(hd));
        dK.setZero();
        dV.setZero();
        for (int64_t j = 0; j < g; j++) {
          const int64_t h = (blk % Hkv) * g + j;
          const float* qh = qp + (b * H + h) * T * hd;
          float* dqh = dq + (b * H + h) * T * hd;
          const float* ph = pp + (blk * g + j) * T * S;
          for (int64_t r0 = 0; r0 < T; r0 += kRowTile) {
            const int64_t rows = std::min(kRowTile, T - r0), keys = std::min(S, r0 + rows + off);
            CMapM P(ph + r0 * S, rows, keys, Eigen::OuterStride<>(S));
            CMapM dO(dop + (b * T + r0) * H * hd + h * hd, rows, hd, Eigen::OuterStride<>(H * hd));
            CMapM Q(qh + r0 * hd, rows, hd, Eigen::OuterStride<>(hd));
            dV.topRows(keys).noalias() += P.transpose() * dO;
            auto dS = dP.topLeftCorner(rows, keys);
            dS.noalias() = dO * V.topRows(keys).transpose();
            for (int64_t i = 0; i < rows; i++) {
              const float sum = (P.row(i).array() * dS.row(i).array()).sum();
              dS.row(i).array() = P.row(i).array() * (dS.row(i).array() - sum);
            }
            MapM(dqh + r0 * hd, rows, hd, Eigen::OuterStride<>(hd)).noalias() = dS * K.topRows(keys);
            dK.topRows(keys).noalias() += dS.transpose() * Q;
          }
        }
      }
    });
  }
};
REGISTER_KERNEL_BUILDER(Name("NdbgAttentionGrad").Device(tensorflow::DEVICE_CPU), AttentionGradOp);

// ---------------------------------------------------------------------------------------------
// The document mask's bias [B, 1, g·T, T] from document ids [B, T]: 0 where key j ≤ query i and
// both are in the same document, `masked` elsewhere; rows repeated g times (grouped heads).
// One op instead of NotEqual, Cast, Mul and Minimum (and Tile) over [B, T, T].
REGISTER_OP("NdbgDocumentBias").Input("doc_ids: int32").Output("bias: float").Attr("g: int >= 1").Attr("masked: float");

class DocumentBiasOp : public OpKernel {
 public:
  explicit DocumentBiasOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("g", &g_));
    OP_REQUIRES_OK(c, c->GetAttr("masked", &masked_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& ids = ctx->input(0);
    OP_REQUIRES(ctx, ids.dims() == 2, tensorflow::errors::InvalidArgument("NdbgDocumentBias: doc_ids must be [B, T]"));
    const int64_t B = ids.dim_size(0), T = ids.dim_size(1), g = g_;
    float* out = Output(ctx, 0, TensorShape({B, 1, g * T, T}));
    if (!out) return;
    const int32_t* dp = ids.flat<int32_t>().data();
    const float masked = masked_;
    Parallel(ctx, B * g * T, 2 * T, [&](int64_t b0, int64_t e0) {
      for (int64_t row = b0; row < e0; row++) {
        const int64_t b = row / (g * T), i = row % T;
        const int32_t* doc = dp + b * T;
        float* o = out + row * T;
        for (int64_t j = 0; j < T; j++) o[j] = j <= i && doc[j] == doc[i] ? 0.0f : masked;
      }
    });
  }

 private:
  int g_;
  float masked_;
};
REGISTER_KERNEL_BUILDER(Name("NdbgDocumentBias").Device(tensorflow::DEVICE_CPU), DocumentBiasOp);

// ---------------------------------------------------------------------------------------------
// Σ x² over N tensors (the global gradient norm's square), in double, in a fixed order
// (deterministic for any thread count). One op instead of a Square and a Sum per tensor.
REGISTER_OP("NdbgSumSquares").Input("x: N * float").Output("sum: float").Attr("N: int >= 1");

class SumSquaresOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    tensorflow::OpInputList xs;
    OP_REQUIRES_OK(ctx, ctx->input_list("x", &xs));
    float* out = Output(ctx, 0, TensorShape({}));
    if (!out) return;
    double total = 0;
    for (int i = 0; i < xs.size(); i++) {
      const float* p = xs[i].flat<float>().data();
      const int64_t n = xs[i].NumElements(), chunks = (n + kChunk - 1) / kChunk;
      std::vector<double> partial(chunks);
      Parallel(ctx, chunks, 2 * kChunk, [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; c++) partial[c] = CArr(p + c * kChunk, std::min(kChunk, n - c * kChunk)).cast<double>().square().sum();
      });
      for (double x : partial) total += x;
    }
    *out = static_cast<float>(total);
  }
};
REGISTER_KERNEL_BUILDER(Name("NdbgSumSquares").Device(tensorflow::DEVICE_CPU), SumSquaresOp);

// ---------------------------------------------------------------------------------------------
// Node-API entry point: lets process.dlopen() load (and keep) this library. Declared without
// node_api.h (opaque handles): it only returns the exports object it is given.
extern "C" __attribute__((visibility("default"))) void* napi_register_module_v1(void* /*env*/, void* exports) { return exports; }
