//go:build teebody_plant

package transport

import "os"

// plant is the defect planted in this build, named by TEEBODY_PLANT
// (plant.go).
var plant = os.Getenv("TEEBODY_PLANT")
