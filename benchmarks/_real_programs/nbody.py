# ruff: noqa: B007, E741, UP004, UP031 - the authors' own code, kept as published
"""N-body simulation, P. Mocz, "Create Your Own N-body Simulation (With Python)"
(2020, github.com/pmocz/nbody-python, ``nbody.py``): leapfrog kick-drift-kick with
``getAcc`` computing pairwise separations from column slices, a masked power
``inv_r3[inv_r3>0] = inv_r3[inv_r3>0]**(-1.5)`` and energies from ``getEnergy``
every step, positions and energies saved into preallocated arrays. Published size:
``N = 100`` particles, ``dt = 0.01``, ``tEnd = 10`` (1000 steps); the benchmark runs
the first ``Nt`` steps of that loop (``tEnd = Nt * dt``). The real-time plot
(``plotRealTime``) is left out: it draws, it computes nothing.
"""

SOURCE = "Mocz, nbody-python (2020), N=100, dt=0.01"
SIZES = {"tiny": {"N": 8, "Nt": 4},
         "published": {"N": 100, "Nt": 10},
         "10x": {"N": 1000, "Nt": 5}}
ITER_KEY = "tEnd"  # the loop count: a run cut to two iterations counts compiles
STATE = ()


def make_inputs(N, Nt):
    return {"N": N, "tEnd": Nt * 0.01}


def two_iterations(inputs):
    return 2 * 0.01


def iterations(inputs):
    return round(inputs["tEnd"] / 0.01)


def program(np, inputs):
    def getAcc(pos, mass, G, softening):
        """
        Calculate the acceleration on each particle due to Newton's Law
        pos  is an N x 3 matrix of positions
        mass is an N x 1 vector of masses
        G is Newton's Gravitational constant
        softening is the softening length
        a is N x 3 matrix of accelerations
        """
        # positions r = [x,y,z] for all particles
        x = pos[:, 0:1]
        y = pos[:, 1:2]
        z = pos[:, 2:3]

        # matrix that stores all pairwise particle separations: r_j - r_i
        dx = x.T - x
        dy = y.T - y
        dz = z.T - z

        # matrix that stores 1/r^3 for all particle pairwise particle separations
        inv_r3 = (dx**2 + dy**2 + dz**2 + softening**2)
        inv_r3[inv_r3 > 0] = inv_r3[inv_r3 > 0]**(-1.5)

        ax = G * (dx * inv_r3) @ mass
        ay = G * (dy * inv_r3) @ mass
        az = G * (dz * inv_r3) @ mass

        # pack together the acceleration components
        a = np.hstack((ax, ay, az))

        return a

    def getEnergy(pos, vel, mass, G):
        """
        Get kinetic energy (KE) and potential energy (PE) of simulation
        pos is N x 3 matrix of positions
        vel is N x 3 matrix of velocities
        mass is an N x 1 vector of masses
        G is Newton's Gravitational constant
        KE is the kinetic energy of the system
        PE is the potential energy of the system
        """
        # Kinetic Energy:
        KE = 0.5 * np.sum(np.sum(mass * vel**2))

        # Potential Energy:

        # positions r = [x,y,z] for all particles
        x = pos[:, 0:1]
        y = pos[:, 1:2]
        z = pos[:, 2:3]

        # matrix that stores all pairwise particle separations: r_j - r_i
        dx = x.T - x
        dy = y.T - y
        dz = z.T - z

        # matrix that stores 1/r for all particle pairwise particle separations
        inv_r = np.sqrt(dx**2 + dy**2 + dz**2)
        inv_r[inv_r > 0] = 1.0 / inv_r[inv_r > 0]

        # sum over upper triangle, to count each interaction only once
        PE = G * np.sum(np.sum(np.triu(-(mass * mass.T) * inv_r, 1)))

        return KE, PE

    def main():
        """ N-body simulation """

        # Simulation parameters
        N = inputs["N"]        # Number of particles
        t = 0                  # current time of the simulation
        tEnd = inputs["tEnd"]  # time at which simulation ends
        dt = 0.01              # timestep
        softening = 0.1        # softening length
        G = 1.0                # Newton's Gravitational Constant

        # Generate Initial Conditions
        np.random.seed(17)            # set the random number generator seed

        mass = 20.0 * np.ones((N, 1)) / N  # total mass of particles is 20
        pos = np.random.randn(N, 3)   # randomly selected positions and velocities
        vel = np.random.randn(N, 3)

        # Convert to Center-of-Mass frame
        vel -= np.mean(mass * vel, 0) / np.mean(mass)

        # calculate initial gravitational accelerations
        acc = getAcc(pos, mass, G, softening)

        # calculate initial energy of system
        KE, PE = getEnergy(pos, vel, mass, G)

        # number of timesteps
        Nt = int(np.ceil(tEnd / dt))

        # save energies, particle orbits for plotting trails
        pos_save = np.zeros((N, 3, Nt + 1))
        pos_save[:, :, 0] = pos
        KE_save = np.zeros(Nt + 1)
        KE_save[0] = KE
        PE_save = np.zeros(Nt + 1)
        PE_save[0] = PE
        t_all = np.arange(Nt + 1) * dt  # noqa: F841 - the author plots against it

        # Simulation Main Loop
        for i in range(Nt):
            # (1/2) kick
            vel += acc * dt / 2.0

            # drift
            pos += vel * dt

            # update accelerations
            acc = getAcc(pos, mass, G, softening)

            # (1/2) kick
            vel += acc * dt / 2.0

            # update time
            t += dt

            # get energy of system
            KE, PE = getEnergy(pos, vel, mass, G)

            # save energies, positions for plotting trail
            pos_save[:, :, i + 1] = pos
            KE_save[i + 1] = KE
            PE_save[i + 1] = PE

        return pos, vel, pos_save, KE_save, PE_save

    return main()
