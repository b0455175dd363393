/* SPDX-License-Identifier: Apache-2.0 */
/* simloop-times.h: simloop's report of its timed steps and overlapped
 * refills (simloop-times.c, which says what each prints). */
#ifndef SIMLOOP_TIMES_H
#define SIMLOOP_TIMES_H

#include "simloop-shard.h"

double sim_step_quantile (SimShard *shard, double q);
void sim_print_step_times (SimShard *shard, double floor_median, double floor_p99);
void sim_print_overlap (const TrackRefillerStats *before,
                        const TrackRefillerStats *at_end,
                        const TrackRefillerStats *after, double floor_median,
                        double floor_s, double graph_s);
gboolean sim_print_beside_refills (SimShard *shard, double floor_median,
                                   GError **error);

#endif /* SIMLOOP_TIMES_H */
