/* A library already in LD_PRELOAD when uarch-run starts: it must stay
 * ahead of uarch's. */
int run_other_marker(void);
int run_other_marker(void) { return 1; }
