/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file trackgen.h
 * @brief Umbrella header: every layer of libtrackgen.
 */
#ifndef TRACKGEN_H
#define TRACKGEN_H

#include <trackgen/kernel.h>
#include <trackgen/exec.h>
#include <trackgen/seeds.h>
#include <trackgen/interop.h>

#endif /* TRACKGEN_H */
