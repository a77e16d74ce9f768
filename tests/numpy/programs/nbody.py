"""Gravitational n-body, one leapfrog (kick-drift-kick) step with softening."""

import numpy as np


def accelerations(pos, mass, softening=0.1):
    d = pos[None, :, :] - pos[:, None, :]
    r2 = (d ** 2).sum(axis=-1) + softening ** 2
    inv_r3 = r2 ** -1.5
    inv_r3 = inv_r3 * (1 - np.eye(pos.shape[0]))
    return np.einsum("ij,ijk,j->ik", inv_r3, d, mass)


def step(pos, vel, mass, dt=0.01):
    vel = vel + 0.5 * dt * accelerations(pos, mass)
    pos = pos + dt * vel
    vel = vel + 0.5 * dt * accelerations(pos, mass)
    return pos, vel


def energy(pos, vel, mass, softening=0.1):
    kinetic = 0.5 * np.sum(mass[:, None] * vel ** 2)
    d = pos[None, :, :] - pos[:, None, :]
    r = np.sqrt((d ** 2).sum(axis=-1) + softening ** 2)
    potential = -0.5 * np.sum(np.triu(mass[:, None] * mass[None, :] / r, 1)) * 2
    return kinetic + potential


def initial(n=16, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 3)), rng.normal(scale=0.1, size=(n, 3)), rng.uniform(0.5, 1.5, n)
