# ruff: noqa: B007, B905, E701, E702, E731, F841, UP030, UP032 - the programs kept in their published style
"""The numpy.org tutorials (deep learning on MNIST from scratch, Pong with REINFORCE,
Moore's law, air quality, SVD image compression, LSTM sentiment analysis, the FFT
pages), written here in their published style at tiny sizes on random data, run with
``import lazy_numpy as np`` against NumPy: the same values, dtypes, shapes and printed
output, NumPy's random draws included. Below them, the fixes the sweep found."""

from __future__ import annotations

import io
import os
import sys

import numpy
import pytest
from lnp_testing import assert_program_matches_numpy

import lazy_numpy
import lazycore as lc

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from benchmarks._real_programs import mnist_scratch  # noqa: E402


def mnist(np):
    """numpy.org's MNIST from scratch as ``benchmarks/_real_programs/mnist_scratch`` has it
    (one copy of the program), here run with ``import lazy_numpy as np``."""
    inputs = mnist_scratch.make_inputs(16, 20, 2, seed=1)
    return mnist_scratch.program(np, {k: np.asarray(v) if isinstance(v, numpy.ndarray) else v
                                      for k, v in inputs.items()})


def pong(np):
    host = numpy.random.default_rng(3)
    frames = host.choice(numpy.array([144, 109, 0, 236, 92], dtype=numpy.uint8), size=(12, 210, 160, 3))
    rewards = host.choice([-1.0, 0.0, 0.0, 0.0, 1.0], size=12)
    D = 80 * 80; H = 20; batch_size = 2; learning_rate = 1e-4; gamma = 0.99; decay_rate = 0.99
    model = {}
    model["W1"] = np.random.randn(H, D) / np.sqrt(D)
    model["W2"] = np.random.randn(H) / np.sqrt(H)
    grad_buffer = {k: np.zeros_like(v) for k, v in model.items()}
    rmsprop_cache = {k: np.zeros_like(v) for k, v in model.items()}
    def sigmoid(x): return 1.0 / (1.0 + np.exp(-x))
    def frame_preprocessing(observation_frame):
        observation_frame = observation_frame[35:195]
        observation_frame = observation_frame[::2, ::2, 0]
        observation_frame[observation_frame == 144] = 0
        observation_frame[observation_frame == 109] = 0
        observation_frame[observation_frame != 0] = 1
        return observation_frame.astype(float).ravel()
    def policy_forward(x, model):
        h = np.dot(model["W1"], x)
        h[h < 0] = 0
        logit = np.dot(model["W2"], h)
        p = sigmoid(logit)
        return p, h
    def policy_backward(eph, epdlogp, model):
        dW2 = np.dot(eph.T, epdlogp).ravel()
        dh = np.outer(epdlogp, model["W2"])
        dh[eph <= 0] = 0
        dW1 = np.dot(dh.T, epx)
        return {"W1": dW1, "W2": dW2}
    def discount_rewards(r, gamma):
        discounted_r = np.zeros_like(r)
        running_add = 0
        for t in reversed(range(0, r.size)):
            if r[t] != 0:
                running_add = 0
            running_add = running_add * gamma + r[t]
            discounted_r[t] = running_add
        return discounted_r
    xs, hs, dlogps, drs = [], [], [], []
    running_reward = None; reward_sum = 0; episode_number = 0; prev_x = None
    out = []
    for step in range(12):
        observation = np.asarray(frames[step])
        cur_x = frame_preprocessing(observation)
        x = cur_x - prev_x if prev_x is not None else np.zeros(D)
        prev_x = cur_x
        aprob, h = policy_forward(x, model)
        action = 2 if np.random.uniform() < aprob else 3
        xs.append(x); hs.append(h)
        y = 1 if action == 2 else 0
        dlogps.append(y - aprob)
        reward = rewards[step]
        reward_sum += reward
        drs.append(reward)
        if step % 6 == 5:
            episode_number += 1
            epx = np.vstack(xs); eph = np.vstack(hs); epdlogp = np.vstack(dlogps); epr = np.vstack(drs)
            xs, hs, dlogps, drs = [], [], [], []
            discounted_epr = discount_rewards(epr, gamma)
            discounted_epr -= np.mean(discounted_epr)
            discounted_epr /= np.std(discounted_epr)
            epdlogp *= discounted_epr
            grad = policy_backward(eph, epdlogp, model)
            for k in model:
                grad_buffer[k] += grad[k]
            if episode_number % batch_size == 0:
                for k, v in model.items():
                    g = grad_buffer[k]
                    rmsprop_cache[k] = (decay_rate * rmsprop_cache[k] + (1 - decay_rate) * g ** 2)
                    model[k] += learning_rate * g / (np.sqrt(rmsprop_cache[k]) + 1e-5)
                    grad_buffer[k] = np.zeros_like(v)
            running_reward = (reward_sum if running_reward is None else running_reward * 0.99 + reward_sum * 0.01)
            print("Resetting env. episode {} reward total was {}. running mean: {}".format(episode_number, reward_sum, running_reward))
            reward_sum = 0
            out.append(discounted_epr)
    return [model["W1"], model["W2"], rmsprop_cache["W1"]] + out


def moores_law(np):
    host = numpy.random.default_rng(5)
    year = numpy.sort(host.integers(1971, 2020, 60)).astype(float)
    transistor_count = numpy.exp(0.34 * (year - 1971) + numpy.log(2250) + host.normal(0, 0.5, 60))
    data = np.asarray(numpy.stack([transistor_count, year], axis=1))
    A_M = np.log(2) / 2
    B_M = np.log(2250) - A_M * 1971
    Moores_law = lambda year: np.exp(B_M) * np.exp(A_M * year)
    ML_1971 = Moores_law(1971); ML_1973 = Moores_law(1973)
    print("In 1973, G. Moore expected {:.0f} transistors on Intels chips".format(ML_1973))
    print("This is x{:.2f} more transistors than 1971".format(ML_1973 / ML_1971))
    year = data[:, 1]; transistor_count = data[:, 0]
    print("year:\t\t", year[:10]); print("trans. cnt:\t", transistor_count[:10])
    yi = np.log(transistor_count)
    Z = year[:, np.newaxis] ** [1, 0]
    B, A = np.linalg.lstsq(Z, yi, rcond=None)[0][::-1]
    coef, res, rank, sv = np.linalg.lstsq(Z, yi, rcond=None)
    print(f"Rate of semiconductors added on a chip every 2 years: {np.exp(coef[0] * 2):.2f}")
    print("Rank", rank, "sv", sv)
    p = np.polyfit(year, yi, 1)
    print("polyfit:", p)
    transistor_count_predicted = np.exp(B) * np.exp(A * year)
    transistor_Moores_law = Moores_law(year)
    print("trans. cnt in 2017: {:.2e}".format(transistor_count_predicted[year == year[-1]].mean()))
    residual = yi - np.polyval(p, year)
    print("R^2 =", 1 - np.sum(residual ** 2) / np.sum((yi - yi.mean()) ** 2))
    yr = np.arange(1971, 2020, 1)
    print(np.vstack((yr[:5], Moores_law(yr[:5]))).T)
    header = "the columns in this file are:\nyear\ntransistor count"
    output = np.block([[year[:, np.newaxis]], ])
    output = np.block([[year[:, np.newaxis], transistor_count[:, np.newaxis], transistor_Moores_law[:, np.newaxis], transistor_count_predicted[:, np.newaxis]]])
    f = io.StringIO(); np.savetxt(f, output, delimiter=",", header=header, fmt="%.10e"); print(f.getvalue()[:300])
    return [coef, res, sv, p, transistor_count_predicted, output]


def air_quality(np):
    host = numpy.random.default_rng(7)
    pollutant_data = np.asarray(host.gamma(2.0, 40.0, (24 * 6, 6)).round(2))
    print(pollutant_data.shape); print(pollutant_data[:5])
    pollutants_A = pollutant_data[:, 0:4]
    pollutants_B = pollutant_data[:, 4:]
    AQI = np.array([0, 51, 101, 201, 301, 401, 501])
    breakpoints = {'PM2.5': np.array([0, 31, 61, 91, 121, 251]), 'PM10': np.array([0, 51, 101, 251, 351, 431]),
                  'NO2': np.array([0, 41, 81, 181, 281, 401]), 'NH3': np.array([0, 201, 401, 801, 1201, 1801]),
                  'SO2': np.array([0, 41, 81, 381, 801, 1601]), 'CO': np.array([0, 1.1, 2.1, 10.1, 17.1, 35])}
    def compute_indices(pol, con):
        bp = breakpoints[pol]
        if pol == 'CO': inc = 0.1
        else: inc = 1
        if bp[0] <= con < bp[1]:
            Bl = bp[0]; Bh = bp[1] - inc; Ih = AQI[1] - inc; Il = AQI[0]
        elif bp[1] <= con < bp[2]:
            Bl = bp[1]; Bh = bp[2] - inc; Ih = AQI[2] - inc; Il = AQI[1]
        elif bp[2] <= con < bp[3]:
            Bl = bp[2]; Bh = bp[3] - inc; Ih = AQI[3] - inc; Il = AQI[2]
        elif bp[3] <= con < bp[4]:
            Bl = bp[3]; Bh = bp[4] - inc; Ih = AQI[4] - inc; Il = AQI[3]
        elif bp[4] <= con < bp[5]:
            Bl = bp[4]; Bh = bp[5] - inc; Ih = AQI[5] - inc; Il = AQI[4]
        elif bp[5] <= con:
            Bl = bp[5]; Bh = bp[5] + bp[4] - (2 * inc); Ih = AQI[6]; Il = AQI[5]
        else:
            print("Concentration out of range!")
        return ((Ih - Il) / (Bh - Bl)) * (con - Bl) + Il
    vcompute_indices = np.vectorize(compute_indices)
    def moving_mean(a, n):
        ret = np.cumsum(a, dtype=float, axis=0)
        ret[n:] = ret[n:] - ret[:-n]
        return ret[n - 1:] / n
    pollutants_A_24hr_avg = moving_mean(pollutants_A, 24)
    pollutants_B_8hr_avg = moving_mean(pollutants_B, 8)[-(pollutants_A_24hr_avg.shape[0]):]
    pollutants = np.concatenate((pollutants_A_24hr_avg, pollutants_B_8hr_avg), axis=1)
    names = ['PM2.5', 'PM10', 'NO2', 'NH3', 'SO2', 'CO']
    sub_indices = np.stack([vcompute_indices(names[i], pollutants[..., i] / (1 if i < 5 else 50)) for i in range(6)], axis=1)
    aqi_array = np.max(sub_indices, axis=1)
    datetime = np.arange(np.datetime64('2020-02-01T00:00'), np.datetime64('2020-02-07T00:00'), np.timedelta64(1, 'h'))[23:]
    after_lock = aqi_array[np.where(datetime >= np.datetime64('2020-02-05T00'))]
    before_lock = aqi_array[np.where(datetime < np.datetime64('2020-02-04T00'))]
    print(after_lock.shape, before_lock.shape)
    rng = np.random.default_rng(11)
    before_sample = rng.choice(before_lock, size=20, replace=False)
    after_sample = rng.choice(after_lock, size=20, replace=False)
    t = (before_sample.mean() - after_sample.mean()) / np.sqrt(before_sample.var(ddof=1) / 20 + after_sample.var(ddof=1) / 20)
    print("t = {:.4f}".format(t))
    conv = np.convolve(pollutant_data[:, 0], np.ones(24), 'valid') / 24
    conv_same = np.convolve(pollutant_data[:, 1], np.ones(5) / 5, mode='same')
    withnan = pollutant_data.copy()
    withnan[::7, 2] = np.nan
    print("nanmean", np.nanmean(withnan, axis=0))
    print("percentiles", np.percentile(aqi_array, [5, 50, 95]), np.nanpercentile(withnan[:, 2], 90))
    print("median", np.nanmedian(withnan, axis=0))
    bad = aqi_array > 200
    print("hours above 200:", bad.sum(), "max {:.6f}".format(aqi_array.max()), np.argmax(aqi_array))
    return [pollutants, sub_indices, aqi_array, before_sample, after_sample, conv, conv_same, np.nanstd(withnan, axis=0)]


def svd_compress(np):
    host = numpy.random.default_rng(9)
    img = np.asarray((host.random((48, 64, 3)) * 255).astype(numpy.uint8))
    print(type(img) is not None, img.shape, img.ndim, img[:, :, 0].shape, img[:, :, 0])
    img_array = img / 255
    print(img_array.max(), img_array.min(), img_array.dtype)
    red_array = img_array[:, :, 0]
    img_gray = img_array @ [0.2126, 0.7152, 0.0722]
    from numpy import linalg
    U, s, Vt = linalg.svd(img_gray)
    print(U.shape, s.shape, Vt.shape)
    Sigma = np.zeros((U.shape[1], Vt.shape[0]))
    np.fill_diagonal(Sigma, s)
    print(linalg.norm(img_gray - U @ Sigma @ Vt) < 1e-10)
    print(np.allclose(img_gray, U @ Sigma @ Vt))
    k = 10
    approx = U @ Sigma[:, :k] @ Vt[:k, :]
    img_array_transposed = np.transpose(img_array, (2, 0, 1))
    U, s, Vt = linalg.svd(img_array_transposed)
    print(U.shape, s.shape, Vt.shape)
    Sigma = np.zeros((3, 48, 64))
    for j in range(3):
        np.fill_diagonal(Sigma[j, :, :], s[j, :])
    reconstructed = U @ Sigma @ Vt
    print(reconstructed.shape)
    reconstructed = np.clip(reconstructed, 0, 1)
    approx_img = U @ Sigma[..., :k] @ Vt[..., :k, :]
    print(approx_img.shape)
    approx_img = np.clip(approx_img, 0, 1)
    approx_img = np.transpose(approx_img, (1, 2, 0))
    U2, s2, Vt2 = linalg.svd(img_gray, full_matrices=False)
    recon2 = U2[:, :k] @ np.diag(s2[:k]) @ Vt2[:k]
    err = [np.linalg.norm(img_gray - U2[:, :r] * s2[:r] @ Vt2[:r]) for r in (1, 5, 20)]
    print(np.round(err, 6))
    return [s, approx, reconstructed, approx_img, s2, recon2, np.array(err)]


def lstm(np):
    host = numpy.random.default_rng(2)
    emb = {w: host.standard_normal(8) for w in ["good", "bad", "movie", "the", "great", "awful", "plot"]}
    reviews = [["the", "movie", "good"], ["awful", "plot", "bad", "the"], ["great", "movie"]]
    labels = [1, 0, 1]
    np.random.seed(42)
    def initialise_params(hidden_dim, input_dim):
        Wf = np.random.randn(hidden_dim, hidden_dim + input_dim); bf = np.random.randn(hidden_dim, 1)
        Wi = np.random.randn(hidden_dim, hidden_dim + input_dim); bi = np.random.randn(hidden_dim, 1)
        Wcm = np.random.randn(hidden_dim, hidden_dim + input_dim); bcm = np.random.randn(hidden_dim, 1)
        Wo = np.random.randn(hidden_dim, hidden_dim + input_dim); bo = np.random.randn(hidden_dim, 1)
        W2 = np.random.randn(1, hidden_dim); b2 = np.zeros((1, 1))
        parameters = {"fw": Wf, "iw": Wi, "ow": Wo, "ccw": Wcm, "fb": bf, "ib": bi, "ob": bo, "ccb": bcm, "w2": W2, "b2": b2}
        return parameters
    def sigmoid(x):
        n = np.exp(np.fmin(x, 0)); d = (1 + np.exp(-np.abs(x)))
        return np.where(x >= 0, 1 / d, n / d)
    def fp_forget_gate(concat, parameters):
        ft = np.dot(parameters['fw'], concat) + parameters['fb']; return sigmoid(ft)
    def fp_input_gate(concat, parameters):
        it = np.dot(parameters['iw'], concat) + parameters['ib']
        cmt = np.dot(parameters['ccw'], concat) + parameters['ccb']
        return sigmoid(it), np.tanh(cmt)
    def fp_output_gate(concat, next_cs, parameters):
        ot = np.dot(parameters['ow'], concat) + parameters['ob']; ot = sigmoid(ot)
        next_hs = ot * np.tanh(next_cs); return ot, next_hs
    def fp_fc_layer(last_hs, parameters):
        z2 = np.dot(parameters['w2'], last_hs) + parameters['b2']; return sigmoid(z2)
    def forward_prop(X_vec, parameters, input_dim):
        hidden_dim = parameters['fw'].shape[0]; time_steps = len(X_vec)
        prev_hs = np.zeros((hidden_dim, 1)); prev_cs = np.zeros(prev_hs.shape)
        caches = {'lstm_values': [], 'fc_values': []}
        for t in range(time_steps):
            x = np.array(X_vec[t]); x = x.reshape(input_dim, 1)
            concat = np.vstack((prev_hs, x))
            ft = fp_forget_gate(concat, parameters)
            it, cct = fp_input_gate(concat, parameters)
            next_cs = (ft * prev_cs) + (it * cct)
            ot, next_hs = fp_output_gate(concat, next_cs, parameters)
            caches['lstm_values'].append({"ft": ft, "it": it, "cct": cct, "ot": ot, "next_cs": next_cs, "prev_cs": prev_cs, "concat": concat})
            prev_hs = next_hs; prev_cs = next_cs
        a2 = fp_fc_layer(prev_hs, parameters)
        caches['fc_values'].append({"a2": a2, "last_hs": prev_hs})
        return caches
    def calculate_derivatives(ft, ot, it, cct, concat, next_cs, prev_cs, dh, dc, parameters):
        tanh_cs = np.tanh(next_cs)
        dcs = dc + dh * ot * (1 - tanh_cs ** 2)
        dot_ = dh * tanh_cs * ot * (1 - ot)
        dit = dcs * cct * it * (1 - it)
        dcct = dcs * it * (1 - cct ** 2)
        dft = dcs * prev_cs * ft * (1 - ft)
        grads = {'dfw': np.dot(dft, concat.T), 'dfb': np.sum(dft, axis=1, keepdims=True),
                 'diw': np.dot(dit, concat.T), 'dib': np.sum(dit, axis=1, keepdims=True),
                 'dow': np.dot(dot_, concat.T), 'dob': np.sum(dot_, axis=1, keepdims=True),
                 'dccw': np.dot(dcct, concat.T), 'dccb': np.sum(dcct, axis=1, keepdims=True)}
        dconcat = (np.dot(parameters['fw'].T, dft) + np.dot(parameters['iw'].T, dit)
                   + np.dot(parameters['ow'].T, dot_) + np.dot(parameters['ccw'].T, dcct))
        hidden_dim = parameters['fw'].shape[0]
        return grads, dconcat[:hidden_dim, :], dcs * ft
    def backprop(y, caches, hidden_dim, input_dim, time_steps, parameters):
        fc = caches['fc_values'][0]
        dz2 = fc['a2'] - y
        gradients = {'dw2': np.dot(dz2, fc['last_hs'].T), 'db2': np.sum(dz2, axis=1, keepdims=True)}
        for k in ['dfw', 'dfb', 'diw', 'dib', 'dow', 'dob', 'dccw', 'dccb']:
            gradients[k] = np.zeros_like(parameters[k[1:]])
        dh = np.dot(parameters['w2'].T, dz2); dc = np.zeros((hidden_dim, 1))
        for t in reversed(range(time_steps)):
            c = caches['lstm_values'][t]
            g, dh, dc = calculate_derivatives(c['ft'], c['ot'], c['it'], c['cct'], c['concat'], c['next_cs'], c['prev_cs'], dh, dc, parameters)
            for k in g:
                gradients[k] += g[k]
        return gradients
    def initialise_mav(hidden_dim, input_dim, params):
        v = {}; s = {}
        for key in params:
            v['d' + key] = np.zeros(params[key].shape); s['d' + key] = np.zeros(params[key].shape)
        return v, s
    def update_parameters(parameters, gradients, v, s, learning_rate=0.01, beta1=0.9, beta2=0.999):
        for key in parameters:
            v['d' + key] = (beta1 * v['d' + key] + (1 - beta1) * gradients['d' + key])
            s['d' + key] = (beta2 * s['d' + key] + (1 - beta2) * (gradients['d' + key] ** 2))
            parameters[key] = parameters[key] - learning_rate * ((v['d' + key]) / np.sqrt(s['d' + key] + 1e-8))
        return parameters, v, s
    def loss_f(A, Y):
        epsilon = 1e-5
        return -(Y * np.log(A + epsilon) + (1 - Y) * np.log(1 - A + epsilon))
    hidden_dim = 16; input_dim = 8
    parameters = initialise_params(hidden_dim, input_dim)
    v, s = initialise_mav(hidden_dim, input_dim, parameters)
    training_losses = []
    for epoch in range(3):
        losses = []
        for review, y in zip(reviews, labels):
            X_vec = [np.asarray(emb[w]) for w in review]
            caches = forward_prop(X_vec, parameters, input_dim)
            gradients = backprop(y, caches, hidden_dim, input_dim, len(X_vec), parameters)
            parameters, v, s = update_parameters(parameters, gradients, v, s)
            y_pred = caches['fc_values'][0]['a2'][0][0]
            loss = loss_f(y_pred, y)
            losses.append(loss)
        mean_loss = np.mean(losses); training_losses.append(mean_loss)
        print(f'Epoch {epoch + 1}, training loss: {mean_loss:.10f}')
        print(np.squeeze(np.round(caches['fc_values'][0]['a2'], 5)))
    return [parameters[k] for k in sorted(parameters)] + [np.array(training_losses)]


def fft_tut(np):
    t = np.linspace(0, 1, 500, endpoint=False)
    sig = np.sin(2 * np.pi * 50 * t) + 0.5 * np.sin(2 * np.pi * 120 * t) + np.asarray(numpy.random.default_rng(0).normal(0, 0.2, 500))
    F = np.fft.fft(sig)
    freqs = np.fft.fftfreq(sig.size, d=t[1] - t[0])
    pos = freqs > 0
    peaks = freqs[pos][np.argsort(np.abs(F[pos]))[-2:]]
    print("peaks:", np.sort(peaks))
    R = np.fft.rfft(sig); rf = np.fft.rfftfreq(sig.size, 1 / 500)
    print(R.shape, R.dtype, rf[:4])
    shifted = np.fft.fftshift(F); sf = np.fft.fftshift(freqs)
    back = np.fft.ifft(F).real
    Rb = np.fft.irfft(R, n=500)
    power = np.abs(R) ** 2
    R2 = R.copy(); R2[np.abs(rf) > 100] = 0
    filtered = np.fft.irfft(R2)
    img = np.asarray(numpy.random.default_rng(1).random((16, 16)))
    F2 = np.fft.fft2(img); F2s = np.fft.fftshift(F2)
    keep = 0.1
    r, c = F2.shape
    F2[int(r * keep):int(r * (1 - keep))] = 0
    F2[:, int(c * keep):int(c * (1 - keep))] = 0
    im_new = np.fft.ifft2(F2).real
    print(f"{np.abs(F).max():.6f} {np.angle(F[50]):.6f}")
    return [F, freqs, R, rf, shifted, sf, back, Rb, power, filtered, F2s, im_new, np.fft.ifftshift(sf)]


@pytest.fixture
def interpreted():
    """The first-run tier: these loops trace a new graph per step (a new sample, review
    length, episode), which the compile tier would spend seconds compiling; the compiled
    programs agree too (to the last few bits of printed full-precision floats)."""
    old = lc.settings.tier
    lc.configure(tier="interpret")
    yield
    lc.configure(tier=old)


@pytest.mark.usefixtures("interpreted")
@pytest.mark.parametrize("program", [mnist, pong, moores_law, air_quality, svd_compress, lstm, fft_tut])
def test_tutorial_matches_numpy(program):
    assert_program_matches_numpy(program, rtol=1e-8, atol=1e-10, seed=0)


def test_flatten_is_a_copy():
    """x.flatten() never shares memory (ravel may): a write into it reached x before."""
    x = numpy.arange(6.0).reshape(2, 3)
    for np, a in ((numpy, x.copy()), (lazy_numpy, lazy_numpy.asarray(x))):
        f = a.flatten()
        f[::3] = -1
        f += 1
        assert not numpy.shares_memory(a, f) if np is numpy else not lazy_numpy.shares_memory(a, f)
        numpy.testing.assert_array_equal(numpy.asarray(a), x)


@pytest.mark.parametrize("v", [0.1, [0.1, 0.2], (0.1,), numpy.float64(0.1), 1, [1, 2]])
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_values_compare_in_numpys_dtype(v, side):
    """v is discovered as NumPy discovers it (a Python float is float64): a list raised
    TypeError and a Python float compared with float32 0.1f in float32 (index 1, not 0)."""
    a = numpy.array([0.1, 0.2, 1.0], dtype=numpy.float32)
    want = numpy.searchsorted(a, v, side=side)
    got = numpy.asarray(lazy_numpy.searchsorted(lazy_numpy.asarray(a), v, side=side))
    numpy.testing.assert_array_equal(got, want)
    assert got.shape == numpy.shape(want)


def test_repr_of_arrays_is_numpys():
    """print([w, b]) or print(params) shows what NumPy shows (was 'Lazyarray(...)')."""
    x = numpy.linspace(0, 1, 5).reshape(1, 5)
    lx = lazy_numpy.asarray(x)
    assert repr(lx) == repr(x)
    assert repr({"w": lx, "n": lx.sum()}) == repr({"w": x, "n": x.sum()})


_SAME_MEMORY = {  # NumPy returns the argument itself, or a view of it
    "rot90": lambda np, a: np.rot90(a),
    "rot90_k3": lambda np, a: np.rot90(a, 3, axes=(1, 0)),
    "rot90_k0": lambda np, a: np.rot90(a, 4),
    "astype_no_copy": lambda np, a: a.astype(a.dtype, copy=False),
    "nan_to_num_no_copy": lambda np, a: np.nan_to_num(a, copy=False),
    "real_if_close": lambda np, a: np.real_if_close(a),  # a fallback handing its argument back
    "astype_copy": lambda np, a: a.astype(a.dtype),
    "nan_to_num": lambda np, a: np.nan_to_num(a),
}


@pytest.mark.parametrize("name", list(_SAME_MEMORY))
def test_results_share_memory_as_numpys(name):
    """Writes through the result reach the argument exactly where NumPy's do (rot90 was a
    copy; astype(copy=False), nan_to_num(copy=False) and fallbacks returning their
    argument gave new arrays, so a program's later writes or reads of x silently differed)."""
    host = numpy.arange(12.0).reshape(3, 4)
    host[1, 1] = numpy.nan
    seen = []
    for np, a in ((numpy, host.copy()), (lazy_numpy, lazy_numpy.asarray(host))):
        r = _SAME_MEMORY[name](np, a)
        r[0] = -7
        a[2] = 5
        seen.append((numpy.asarray(a).copy(), numpy.asarray(r).copy(), r is a))
    (wa, wr, wsame), (ga, gr, gsame) = seen
    numpy.testing.assert_array_equal(ga, wa)
    numpy.testing.assert_array_equal(gr, wr)
    assert gsame == wsame


def test_complex_nan_to_num_without_copy_writes_its_argument():
    host = numpy.array([1 + numpy.nan * 1j, numpy.inf + 0j])
    a, la = host.copy(), lazy_numpy.asarray(host)
    numpy.nan_to_num(a, copy=False)
    r = numpy.nan_to_num(la, copy=False)
    assert r is la
    numpy.testing.assert_array_equal(numpy.asarray(la), a)


def _per_sample_sgd(np, X, y, w, steps):
    correct = 0
    for i in range(steps):
        x = X[i]  # the tutorials' per-sample loops: a new Python int each step
        p = np.dot(x, w)
        correct += int(np.argmax(p) == y[i])
        w += 0.01 * np.outer(x, (np.arange(3) == y[i]) - p)
        w[i % 4, 1] -= 0.001 * X[i, 2]
    return correct, w


def test_a_per_sample_loop_compiles_once():
    """``X[i]`` reads row i at a program parameter: a loop over samples with a sync per
    step runs one compiled program (it compiled one per sample: 1000 samples, 1000
    compiles, the MNIST tutorial 20x slower than NumPy), with NumPy's values."""
    host = numpy.random.default_rng(0)
    X, y, w = host.random((12, 4)), host.integers(0, 3, 12), host.random((4, 3))
    want = _per_sample_sgd(numpy, X, y, w.copy(), 12)
    lX, ly, lw = (lazy_numpy.asarray(a) for a in (X, y, w))
    _per_sample_sgd(lazy_numpy, lX, ly, lazy_numpy.asarray(w), 3)
    before = lc.metrics.counters()["compiles"]
    got = _per_sample_sgd(lazy_numpy, lX, ly, lw, 12)
    assert lc.metrics.counters()["compiles"] - before <= 1
    assert got[0] == want[0]
    numpy.testing.assert_allclose(numpy.asarray(got[1]), want[1], rtol=1e-12)
    numpy.testing.assert_array_equal(numpy.asarray(lX[-1, ::-1]), X[-1, ::-1])


@pytest.mark.parametrize("key", ["whole", "T", "row", "col", "0d"])
def test_ascontiguousarray_shares_memory_as_numpys(key):
    """With ``import lazy_numpy as np``, ``np.ascontiguousarray`` was NumPy's: a host copy
    the program went on with eagerly, which a write into it never took back to ``a``."""
    take = {"whole": lambda a: a, "T": lambda a: a.T, "row": lambda a: a[1],
            "col": lambda a: a[:, 1], "0d": lambda a: a[0, 0]}[key]
    seen = []
    for np in (numpy, lazy_numpy):
        a = np.arange(12.0).reshape(3, 4)
        r = np.ascontiguousarray(take(a))
        assert isinstance(r, numpy.ndarray if np is numpy else lazy_numpy.LazyArray)
        r[...] = -1
        seen.append((numpy.asarray(a).copy(), numpy.asarray(r).copy()))
    (wa, wr), (ga, gr) = seen
    numpy.testing.assert_array_equal(ga, wa)
    numpy.testing.assert_array_equal(gr, wr)


def test_view_as_void_rows_finds_unique_rows_as_numpy():
    """The unique-rows idiom (each row's bytes as one np.void): view(dtype) to a dtype no
    LazyArray holds raised DTypeError; it is NumPy's view of the values."""
    host = numpy.random.default_rng(1).integers(0, 2, (8, 3))
    got = []
    for np, Z in ((numpy, host.copy()), (lazy_numpy, lazy_numpy.asarray(host))):
        T = np.ascontiguousarray(Z).view(np.dtype((np.void, Z.dtype.itemsize * Z.shape[1])))
        _, idx = np.unique(T, return_index=True)
        got.append((numpy.asarray(Z[np.sort(idx)]), T.dtype, T.shape))
    numpy.testing.assert_array_equal(got[1][0], got[0][0])
    assert got[1][1:] == got[0][1:]
