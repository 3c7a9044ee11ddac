// A small diffusion U-Net's forward pass (jitted, no training), with its JAX twin (twin.py beside
// this file). Inputs: NHWC images and integer timesteps. The timestep becomes a sinusoidal
// embedding and an MLP (dense, SiLU, dense); each residual block is two "3x3 SAME conv -> group
// norm -> SiLU" blocks with the time embedding added per channel between them (a dense layer per
// block) and a 1x1 conv on the skip path when the channel count changes. Encoder of two levels
// (downsampling by a stride-2 conv, then by a 2x2 avg_pool), a middle block, a decoder that
// upsamples with image::resize nearest and concatenates the encoder's skip connections along the
// channels, and group norm, SiLU and a 3x3 conv to the output channels. Its full size (batch 16,
// 64x64x3, 32/64 channels) is issue 29's small diffusion U-Net forward pass. The parameters are
// one raveled vector, unravelled inside the jitted forward pass (Layout below), as in the twin.
//
//   example_unet_forward [--size small|full] [--check examples/unet_forward/oracle_small.json]
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "support/example.h"
#include "weft/image.h"
#include "weft/nn.h"
#include "weft/random.h"
#include "weft/weft.h"

namespace {

using weft::Array;
using weft::DType;
namespace np = weft::np;
namespace lax = weft::lax;
namespace nn = weft::nn;
namespace image = weft::image;
namespace random = weft::random;
using weft::examples::key_at;

constexpr double kEpsilon = 1e-6;

struct Sizes {
  std::int64_t batch, side, channels, c1, c2, groups, tdim;
};

// The parameter tree raveled: its arrays one after another in the twin's order (its dicts'
// insertion order), each drawn as standard normals n and scaled as (n / div) * mul + shift. The
// drawing program makes the whole vector with one random::normal and one elementwise kernel,
// and the forward pass unravels it with slices, so no program holds a kernel per parameter.
struct Entry {
  std::string name;  // as the twin's oracle file flattens the tree
  weft::Shape shape;
  std::int64_t offset;
  float div = 1.0f, mul = 1.0f, shift = 0.0f;
};

class Layout {
 public:
  void conv(const std::string& name, std::int64_t k, std::int64_t cin, std::int64_t cout) {
    add(name + ".w", {k, k, cin, cout}, std::sqrt(float(k * k * cin)));
    add(name + ".b", {cout}, 1.0f, 0.1f);
  }
  void norm(const std::string& name, std::int64_t c) {
    add(name + ".scale", {c}, 1.0f, 0.1f, 1.0f);
    add(name + ".bias", {c}, 1.0f, 0.1f);
  }
  void dense(const std::string& name, std::int64_t cin, std::int64_t cout) {
    add(name + ".w", {cin, cout}, std::sqrt(float(cin)));
    add(name + ".b", {cout}, 1.0f, 0.1f);
  }
  void res(const std::string& name, std::int64_t cin, std::int64_t cout, std::int64_t tch) {
    conv(name + ".conv1", 3, cin, cout);
    norm(name + ".norm1", cout);
    dense(name + ".temb", tch, cout);
    conv(name + ".conv2", 3, cout, cout);
    norm(name + ".norm2", cout);
    if (cin != cout) conv(name + ".skip", 1, cin, cout);
  }

  std::vector<Entry> entries;
  std::int64_t size = 0;  // elements in all

 private:
  void add(const std::string& name, const weft::Shape& shape, float div, float mul = 1.0f,
           float shift = 0.0f) {
    entries.push_back({name, shape, size, div, mul, shift});
    size += weft::num_elements(shape);
  }
};

Layout layout(const Sizes& s) {
  const std::int64_t tch = 4 * s.c1;
  Layout p;
  p.dense("time1", s.tdim, tch);
  p.dense("time2", tch, tch);
  p.conv("conv_in", 3, s.channels, s.c1);
  p.res("enc1", s.c1, s.c1, tch);
  p.conv("down1", 3, s.c1, s.c1);
  p.res("enc2", s.c1, s.c2, tch);
  p.res("mid", s.c2, s.c2, tch);
  p.res("dec2", s.c2 + s.c2, s.c2, tch);
  p.res("dec1", s.c2 + s.c1, s.c1, tch);
  p.norm("norm_out", s.c1);
  p.conv("conv_out", 3, s.c1, s.channels);
  return p;
}

using Params = std::map<std::string, Array>;

Params unravel(const Array& flat, const Layout& layout) {
  Params p;
  for (const Entry& e : layout.entries) {
    const std::int64_t end = e.offset + weft::num_elements(e.shape);
    p.emplace(e.name, np::reshape(lax::slice(flat, {e.offset}, {end}), e.shape));
  }
  return p;
}

// Each element's div, mul and shift (f32[size] each), to scale the drawn vector in one kernel.
std::vector<Array> scales(const Layout& layout) {
  std::vector<float> div, mul, shift;
  for (const Entry& e : layout.entries) {
    const auto n = std::size_t(weft::num_elements(e.shape));
    div.insert(div.end(), n, e.div);
    mul.insert(mul.end(), n, e.mul);
    shift.insert(shift.end(), n, e.shift);
  }
  return {Array::from_vector<float>({layout.size}, div),
          Array::from_vector<float>({layout.size}, mul),
          Array::from_vector<float>({layout.size}, shift)};
}

// One parameter of the raveled vector, on the host.
weft::HostArray host_param(const weft::HostArray& flat, const Entry& e) {
  const auto v = flat.view<float>().subspan(e.offset, weft::num_elements(e.shape));
  return weft::HostArray::from(e.shape, std::vector<float>(v.begin(), v.end()));
}

Array conv(const Array& x, const Params& p, const std::string& name, std::int64_t stride = 1) {
  static const lax::ConvDimensionNumbers nhwc = lax::conv_dimension_numbers("NHWC", "HWIO", "NHWC");
  return lax::conv_general_dilated(x, p.at(name + ".w"), {stride, stride}, "SAME", {}, {}, nhwc) +
         p.at(name + ".b");
}

Array dense(const Array& x, const Params& p, const std::string& name) {
  return np::matmul(x, p.at(name + ".w")) + p.at(name + ".b");
}

Array silu(const Array& x) {
  return x * np::sigmoid(x);
}

Array group_norm(const Array& x, const Params& p, const std::string& name, std::int64_t groups) {
  return nn::group_norm(x, groups, p.at(name + ".scale"), p.at(name + ".bias"), kEpsilon);
}

Array timestep_embedding(const Array& t, std::int64_t dim) {
  const std::int64_t half = dim / 2;
  const Array freqs =
      np::exp(np::arange(half, DType::F32) * float(-std::log(10000.0) / double(half)));
  const Array args = np::reshape(np::astype(t, DType::F32), {-1, 1}) * np::reshape(freqs, {1, -1});
  return np::concatenate({np::sin(args), np::cos(args)}, 1);
}

Array res_block(const Array& x, const Array& temb, const Params& p, const std::string& name,
                std::int64_t groups) {
  Array h = silu(group_norm(conv(x, p, name + ".conv1"), p, name + ".norm1", groups));
  const Array t = dense(silu(temb), p, name + ".temb");
  h = h + np::reshape(t, {t.shape()[0], 1, 1, t.shape()[1]});
  h = silu(group_norm(conv(h, p, name + ".conv2"), p, name + ".norm2", groups));
  const Array skip = p.count(name + ".skip.w") ? conv(x, p, name + ".skip") : x;
  return skip + h;
}

Array upsample(const Array& x) {
  const weft::Shape& s = x.shape();
  return image::resize(x, {s[0], 2 * s[1], 2 * s[2], s[3]}, image::ResizeMethod::Nearest);
}

// (embedding, middle block's output, output)
std::vector<Array> unet(const Params& p, const Array& x, const Array& t, const Sizes& s) {
  const Array emb = timestep_embedding(t, s.tdim);
  const Array temb = dense(silu(dense(emb, p, "time1")), p, "time2");
  Array h = conv(x, p, "conv_in");
  const Array skip1 = res_block(h, temb, p, "enc1", s.groups);  // [B, S, S, c1]
  h = conv(skip1, p, "down1", 2);                               // [B, S/2, S/2, c1]
  const Array skip2 = res_block(h, temb, p, "enc2", s.groups);  // [B, S/2, S/2, c2]
  h = np::avg_pool(skip2, {2, 2}, {2, 2});
  const Array mid = res_block(h, temb, p, "mid", s.groups);  // [B, S/4, S/4, c2]
  h = np::concatenate({upsample(mid), skip2}, -1);
  h = res_block(h, temb, p, "dec2", s.groups);  // [B, S/2, S/2, c2]
  h = np::concatenate({upsample(h), skip1}, -1);
  h = res_block(h, temb, p, "dec1", s.groups);  // [B, S, S, c1]
  const Array out = conv(silu(group_norm(h, p, "norm_out", s.groups)), p, "conv_out");
  return {emb, mid, out};
}

}  // namespace

int main(int argc, char** argv) {
  namespace ex = weft::examples;
  const ex::Options options =
      ex::parse_options(argc, argv, "A small diffusion U-Net's forward pass (examples/README.md).");
  const Sizes s =
      options.size == "small" ? Sizes{2, 16, 3, 8, 16, 4, 16} : Sizes{16, 64, 3, 32, 64, 8, 32};
  try {
    // The parameters and data drawn in one traced program: eagerly, each of the random bit
    // generator's ops would be a program of its own to build.
    const Layout params = layout(s);
    // The key split inside it too: eagerly, split and key_at would be a few dozen programs.
    std::vector<Array> draw_args = scales(params);
    draw_args.push_back(random::key(29));
    // (div, mul, shift, key) -> (raveled params, images, timesteps)
    const std::vector<Array> drawn = weft::jit([&s, &params](const std::vector<Array>& a) {
      const Array keys = random::split(a[3], 3);
      const Array n = random::normal(key_at(keys, 0), {params.size});
      return std::vector<Array>{
          (n / a[0]) * a[1] + a[2],
          random::normal(key_at(keys, 1), {s.batch, s.side, s.side, s.channels}),
          random::randint(key_at(keys, 2), {s.batch}, 0, 1000)};
    })(draw_args);
    const Array &flat = drawn[0], &x = drawn[1], &t = drawn[2];

    // (flat params, images, timesteps) -> (embedding, middle, output)
    auto forward = weft::jit(
        [&](const std::vector<Array>& a) { return unet(unravel(a[0], params), a[1], a[2], s); });

    if (options.size == "full")
      ex::time_step(
          "unet_forward", drawn, [&] { forward(drawn).back().to_host(); }, options.repeats);
    // The mean |output| (the twin's --size full prints it too: the same inputs at every size).
    const std::vector<Array> out = forward(drawn);
    const weft::HostArray result = out[2].to_host();
    double sum = 0;
    for (std::int64_t i = 0; i < result.size(); ++i) sum += std::abs(result.get_f64(i));
    std::printf("unet_forward %s: output %s, mean |out| %.6f\n", options.size.c_str(),
                weft::shape_to_string(out[2].shape()).c_str(), sum / double(result.size()));
    if (options.size == "full" || options.check.empty()) return 0;
    const ex::Oracle oracle = ex::load_oracle(options.check);
    ex::Checker check;
    check.expect("inputs.images", x, oracle.inputs.at("images"));
    check.expect("inputs.timesteps", t, oracle.inputs.at("timesteps"));
    if (params.entries.size() != oracle.params.size()) {
      std::fprintf(stderr, "example_unet_forward: %zu parameters, the twin has %zu\n",
                   params.entries.size(), oracle.params.size());
      return 3;
    }
    const weft::HostArray flat_host = flat.to_host();
    for (const Entry& e : params.entries)
      check.expect("params." + e.name, host_param(flat_host, e), oracle.params.at(e.name), 1e-6);
    check.expect("embedding", out[0], oracle.expected.at("embedding"));
    check.expect("mid", out[1], oracle.expected.at("mid"));
    check.expect("out", result, oracle.expected.at("out"));
    return check.exit_code();
  } catch (const weft::Error& e) {
    std::fprintf(stderr, "example_unet_forward: %s\n", e.what());
    return 1;
  }
}
