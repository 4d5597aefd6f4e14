// Command workload is the one program in the CRI tests' images (test/support/testimage): a static
// binary with a mode per job a test container has, and no shell, so that an exec into a
// container runs it too. Unknown modes and bad flags exit with code 2.
//
//	workload pause                 sleep until SIGTERM or SIGINT, reaping children (a sandbox's pause)
//	                               (pause and sleep say on stderr once they handle the signals)
//	workload serve --port N        HTTP: "hello from HOSTNAME" on / ("… at PATH" on any other path),
//	  [--bind ADDR] [--name WHO]   "ok" on /healthz; on ADDR only (default: all addresses), WHO for HOSTNAME
//	  [--dir DIR]                  DIR's files and listings on / instead (python3 -m http.server's job)
//	workload log --every D         a line with the hostname and a counter on stdout every D
//	workload sleep [D]             sleep D (default: until a signal), then exit 0
//	workload exit --code N         exit with code N at once
//	workload cat FILE...           print files (e.g. /etc/vk-image: inside the image, not the host)
//	workload ls DIR                list a directory's entries, one a line
//	workload echo ARG...           print the arguments
//	workload env                   print the environment, one variable a line
//	workload get URL               HTTP GET URL and print the body; exit 1 unless 200 (pod-to-pod traffic)
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: workload pause|serve|log|sleep|exit|cat|ls|echo|write|env|get [args]")
		os.Exit(2)
	}
	mode, args := os.Args[1], os.Args[2:]
	if err := run(mode, args); err != nil {
		fmt.Fprintf(os.Stderr, "workload %s: %v\n", mode, err)
		var code exitCode
		if errors.As(err, &code) {
			os.Exit(int(code))
		}
		os.Exit(1)
	}
}

// exitCode is an error that ends the program with a given code.
type exitCode int

func (c exitCode) Error() string { return "exit code " + strconv.Itoa(int(c)) }

func run(mode string, args []string) error {
	flags := flag.NewFlagSet(mode, flag.ContinueOnError)
	switch mode {
	case "pause":
		return pause()
	case "serve":
		port := flags.Int("port", 8080, "port to listen on")
		bind := flags.String("bind", "", "address to listen on (default: all addresses)")
		name := flags.String("name", "", "who says hello (default: the hostname)")
		dir := flags.String("dir", "", "serve this directory's files and listings on / instead of the greeting")
		if err := flags.Parse(args); err != nil {
			return exitCode(2)
		}
		return serve(net.JoinHostPort(*bind, strconv.Itoa(*port)), *name, *dir)
	case "log":
		every := flags.Duration("every", time.Second, "interval between lines")
		if err := flags.Parse(args); err != nil {
			return exitCode(2)
		}
		return logEvery(*every)
	case "sleep":
		if len(args) == 0 {
			stop := stopSignals()
			fmt.Fprintln(os.Stderr, "workload sleep: until SIGTERM or SIGINT")
			<-stop
			return nil
		}
		d, err := time.ParseDuration(args[0])
		if err != nil {
			return exitCode(2)
		}
		time.Sleep(d)
		return nil
	case "exit":
		code := flags.Int("code", 0, "exit code")
		if err := flags.Parse(args); err != nil {
			return exitCode(2)
		}
		os.Exit(*code)
	case "cat":
		for _, name := range args {
			if err := cat(name); err != nil {
				return err
			}
		}
		return nil
	case "ls":
		dir := "."
		if len(args) > 0 {
			dir = args[0]
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			fmt.Println(e.Name())
		}
		return nil
	case "write": // FILE TEXT: TEXT, without a newline (a termination message)
		if len(args) != 2 {
			return exitCode(2)
		}
		return os.WriteFile(args[0], []byte(args[1]), 0o644)
	case "echo":
		for i, a := range args {
			if i > 0 {
				fmt.Print(" ")
			}
			fmt.Print(a)
		}
		fmt.Println()
		return nil
	case "env":
		for _, kv := range os.Environ() {
			fmt.Println(kv)
		}
		return nil
	case "get":
		if len(args) != 1 {
			return exitCode(2)
		}
		return get(args[0])
	}
	fmt.Fprintf(os.Stderr, "unknown mode %q\n", mode)
	return exitCode(2)
}

// pause is a sandbox's init: it holds the namespaces and, as PID 1 of a shared PID namespace,
// reaps the orphans that would otherwise stay zombies.
func pause() error {
	stop := stopSignals()
	children := make(chan os.Signal, 1)
	signal.Notify(children, syscall.SIGCHLD)
	// On stderr, which no test reads for a workload's output: SIGTERM is handled from here on.
	fmt.Fprintln(os.Stderr, "workload pause: until SIGTERM or SIGINT")
	for {
		select {
		case <-stop:
			return nil
		case <-children:
			for {
				pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
		}
	}
}

// stopSignals delivers SIGTERM and SIGINT, which end every long-running mode with exit code 0.
func stopSignals() <-chan os.Signal {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	return stop
}

// serve answers HTTP on addr: "hello from NAME" (the hostname when name is empty), naming the
// path when it is not / (so that a test sees its request arrived whole), or dir's files.
func serve(addr, name, dir string) error {
	if name == "" {
		name, _ = os.Hostname()
	}
	var root http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			fmt.Fprintf(w, "hello from %s\n", name)
		} else {
			fmt.Fprintf(w, "hello from %s at %s\n", name, r.URL.Path)
		}
	})
	if dir != "" {
		root = http.FileServer(http.Dir(dir))
	}
	mux := http.NewServeMux()
	mux.Handle("/", root)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	stop := stopSignals()
	go func() {
		<-stop
		_ = srv.Close()
	}()
	fmt.Printf("serving on %s\n", l.Addr())
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func logEvery(every time.Duration) error {
	host, _ := os.Hostname()
	stop := stopSignals()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for n := 1; ; n++ {
		fmt.Printf("tick %d from %s\n", n, host)
		select {
		case <-stop:
			return nil
		case <-tick.C:
		}
	}
}

func cat(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(os.Stdout, f)
	return err
}

// get fetches url once, within a few seconds, and prints the body.
func get(url string) error {
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(os.Stdout, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}
