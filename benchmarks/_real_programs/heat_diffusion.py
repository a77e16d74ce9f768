# ruff: noqa: B007, E741, UP004, UP031 - the authors' own code, kept as published
"""The two-dimensional diffusion (heat) equation, explicit finite differences:
C. Hill, *Learning Scientific Programming with Python* / scipython.com blog, "The
two-dimensional diffusion equation" (2016): a hot disc in a cold plate, forward
difference in time, central differences in space by slicing (``do_timestep``), the
initial condition set cell by cell. Published size: a 10 mm plate at ``dx = dy =
0.1`` mm (100×100), ``D = 4``, ``nsteps = 101``.
"""

SOURCE = "Hill, scipython.com, 2-D diffusion equation, 100x100 plate, 101 steps"
SIZES = {"tiny": {"w": 3.2, "nsteps": 4},
         "published": {"w": 10.0, "nsteps": 101},
         "10x": {"w": 31.6, "nsteps": 101}}
ITER_KEY = "nsteps"  # the loop count: a run cut to two iterations counts compiles
STATE = ()


def make_inputs(w, nsteps):
    return {"w": w, "nsteps": nsteps}


def iterations(inputs):
    return inputs["nsteps"]


def program(np, inputs):
    # plate size, mm
    w = h = inputs["w"]
    # intervals in x-, y- directions, mm
    dx = dy = 0.1
    # Thermal diffusivity of steel, mm2.s-1
    D = 4.

    Tcool, Thot = 300, 700

    nx, ny = int(w / dx), int(h / dy)

    dx2, dy2 = dx * dx, dy * dy
    dt = dx2 * dy2 / (2 * D * (dx2 + dy2))

    u0 = Tcool * np.ones((nx, ny))
    u = u0.copy()

    # Initial conditions - circle of radius r centred at (cx,cy) (mm)
    r, cx, cy = 2, 5, 5
    r2 = r**2
    for i in range(nx):
        for j in range(ny):
            p2 = (i * dx - cx)**2 + (j * dy - cy)**2
            if p2 < r2:
                u0[i, j] = Thot

    def do_timestep(u0, u):
        # Propagate with forward-difference in time, central-difference in space
        u[1:-1, 1:-1] = u0[1:-1, 1:-1] + D * dt * (
            (u0[2:, 1:-1] - 2 * u0[1:-1, 1:-1] + u0[:-2, 1:-1]) / dx2
            + (u0[1:-1, 2:] - 2 * u0[1:-1, 1:-1] + u0[1:-1, :-2]) / dy2)

        u0 = u.copy()
        return u0, u

    # Number of timesteps
    nsteps = inputs["nsteps"]
    for m in range(nsteps):
        u0, u = do_timestep(u0, u)

    return u0, u
