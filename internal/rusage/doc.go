// Package rusage reads what this process has used so far: its CPU time, its
// context switches and its page faults. Where the system does not tell them
// (not on unix), they read 0.
//
// On a machine shared with other work, CPU time tells a cost more steadily
// than wall time does.
package rusage
