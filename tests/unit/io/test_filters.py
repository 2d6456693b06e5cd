"""The FFT low-pass of recorded series (wallin-shabana-2013 Figs. 12b/13b's 30 Hz filter)."""

import numpy as np
import pytest

from trackdyn.io import lowpass_fft, sample_interval


def _record(n=1001, dt=1e-3):
    return np.arange(n) * dt, dt


def _bin(k, n):
    """A sinusoid on DFT bin k of n samples whose first and last samples are equal (symmetric about the middle),
    so that the line through the record's ends takes nothing of it."""
    i = np.arange(n)
    return np.cos(2 * np.pi * k * (i - 0.5 * (n - 1)) / n)


def test_keeps_below_removes_above_cutoff_with_trend():
    n, dt = 1000, 1e-3
    t = np.arange(n) * dt
    low = _bin(5, n) + 0.3 * _bin(29, n)      # 5 and 29 Hz (bins of a 1 s record)
    high = 0.5 * _bin(31, n) + 0.2 * _bin(80, n)
    trend = 3.0 + 40.0 * t                    # a growing force: the ends differ by 40
    out = lowpass_fft(low + high + trend, dt, 30.0)
    np.testing.assert_allclose(out, low + trend, rtol=0, atol=1e-11)


def test_linear_passes_and_nyquist_keeps_all():
    n, dt = 1000, 1e-3
    t = np.arange(n) * dt
    line = 2.0 - 7.0 * t
    np.testing.assert_allclose(lowpass_fft(line, dt, 30.0), line, rtol=0, atol=1e-12)
    y = _bin(10, n) + _bin(200, n) + np.sin(2 * np.pi * 123.4 * t)
    np.testing.assert_allclose(lowpass_fft(y, dt, 500.0), y, rtol=0, atol=1e-12)


def test_off_bin_high_frequency_is_attenuated():
    # a realistic record: 4 Hz motion plus 150 Hz chatter, neither on a bin; the filtered series is the 4 Hz
    # motion within 2 % of the chatter's amplitude away from the record's ends (a brick wall rings at them)
    t, dt = _record(2001, 5e-4)
    slow = np.sin(2 * np.pi * 4.1 * t)
    out = lowpass_fft(slow + 0.5 * np.sin(2 * np.pi * 151.3 * t), dt, 30.0)
    mid = slice(200, -200)
    assert np.max(np.abs(out[mid] - slow[mid])) < 0.02 * 0.5


def test_axis_and_errors():
    t, dt = _record(200)
    y = np.stack([np.sin(2 * np.pi * 3 * t), np.sin(2 * np.pi * 90 * t)])
    out = lowpass_fft(y, dt, 30.0, axis=1)
    np.testing.assert_allclose(out[0], lowpass_fft(y[0], dt, 30.0))
    np.testing.assert_allclose(lowpass_fft(y.T, dt, 30.0, axis=0), out.T)
    assert sample_interval(t) == pytest.approx(dt)
    with pytest.raises(ValueError, match="cutoff_hz"):
        lowpass_fft(y, dt, 0.0)
    with pytest.raises(ValueError, match="dt"):
        lowpass_fft(y, -1.0, 30.0)
    with pytest.raises(ValueError, match="NaN"):
        lowpass_fft(np.array([1.0, np.nan, 2.0]), dt, 30.0)
    with pytest.raises(ValueError, match="equally spaced"):
        sample_interval(np.array([0.0, 0.1, 0.3]))
