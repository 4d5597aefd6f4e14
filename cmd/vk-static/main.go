// Command vk-static is the node agent. Until the lifecycle loop lands it only prints its
// version.
package main

import (
	"fmt"

	"github.com/vk-static/vk-static/internal/version"
)

func main() {
	fmt.Println("vk-static", version.Version)
}
